"""The README's two commands are the ones that work: CI runs the test command verbatim."""

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]


def readme_commands() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    return [line for block in blocks for line in block.splitlines() if line and not line.startswith("#")]


def test_ci_runs_the_readmes_test_command_verbatim():
    test_command = next(c for c in readme_commands() if "pytest" in c)
    assert test_command in (ROOT / ".ci" / "run").read_text().splitlines()


def test_the_readmes_first_command_runs_the_demo():
    assert readme_commands()[0].endswith("toolvet demo")
