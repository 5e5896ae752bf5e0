"""Usage mistakes are one line with exit 2, and options that contradict each other are refused by
name before anything runs: every on/off pair in the CLI (``--writable --read-only``), an option
given twice, and the pairs whose meanings undo each other (``--quiet --json``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
import typer.main

from tests.cli.conftest import Toolvet
from toolvet.cli import app


def run_toolvet(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolvet", *args], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ), check=False)


def leaves(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Every runnable command of the CLI, as its words and its command object."""
    if not hasattr(command, "list_commands"):
        return [(path, command)]
    ctx = typer.Context(command, info_name="toolvet")
    return [leaf for name in command.list_commands(ctx)
            for leaf in leaves(command.get_command(ctx, name), (*path, name))]


PAIRS = [(words, opt.opts[0], opt.secondary_opts[0]) for words, command in leaves(typer.main.get_command(app))
         for opt in command.params if getattr(opt, "secondary_opts", None)]


def test_the_cli_has_on_off_pairs_to_check() -> None:
    assert (("tool", "set"), "--writable", "--read-only") in PAIRS and len(PAIRS) >= 10


@pytest.mark.parametrize(("words", "on", "off"), PAIRS, ids=[" ".join((*w, a, b)) for w, a, b in PAIRS])
def test_both_sides_of_an_on_off_pair_are_refused_naming_both(
    toolvet: Toolvet, words: tuple[str, ...], on: str, off: str
) -> None:
    for first, second in ((on, off), (off, on)):
        result = toolvet(*words, first, second)
        assert result.exit_code == 2, (result.stdout, result.stderr)
        assert result.stderr == f"error: {first} and {second} contradict each other: give one of them\n"


def test_read_only_and_writable_together_change_nothing_in_a_real_process(hand: Toolvet) -> None:
    proc = run_toolvet("tool", "set", "hand/search", "--read-only", "--writable")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == "error: --read-only and --writable contradict each other: give one of them\n"
    assert hand.json("tool", "show", "hand/search")["writable"] is True
    proc = run_toolvet("tool", "set", "hand/search", "--writable", "--read-only")
    assert proc.returncode == 2 and hand.json("tool", "show", "hand/search")["writable"] is True


def test_an_option_given_twice_is_refused_but_a_repeatable_one_is_not(hand: Toolvet) -> None:
    twice = hand("tool", "set", "hand/search", "--approval", "user", "--approval=operator")
    assert (twice.exit_code, twice.stderr) == (2, "error: --approval is given 2 times: give it once\n")
    assert hand.json("tool", "show", "hand/search")["approval"] == "user"
    hand.ok("server", "add", "two", "--url", "http://127.0.0.1:9/mcp", "--header", "A: 1", "--header", "B: 2")
    assert hand.json("server", "show", "two")["header_names"] == ["A", "B"]


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("token", "create", "--role", "admin", "--quiet", "--json"), "--quiet and --json"),
        (("call", "list", "--all", "--status", "done"), "--all and --status"),
        (("tool", "list", "--no-findings", "--severity", "high"), "--no-findings and --severity"),
        (("demo", "--no-serve", "--port", "8730"), "--no-serve and --port"),
    ],
)
def test_options_whose_meanings_undo_each_other_are_refused_by_name(
    toolvet: Toolvet, args: tuple[str, ...], named: str
) -> None:
    result = toolvet(*args)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"error: {named} contradict each other: give one of them\n"
    assert toolvet.json("token", "list")["total"] == 0


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("server", "add", "--no-such-option"),
         "error: No such option: --no-such-option (see 'toolvet server add --help')"),
        (("tool", "show"), "error: Missing argument 'SERVER/TOOL'. (see 'toolvet tool show --help')"),
        (("tool", "list", "--state", "maybe"), "error: Invalid value for '--state': 'maybe' is not one of "),
        (("nope",), "error: No such command 'nope'. (see 'toolvet --help')"),
    ],
)
def test_a_usage_error_is_one_line_with_exit_2_in_a_real_process(
    home: Path, args: tuple[str, ...], says: str
) -> None:
    proc = run_toolvet(*args)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(says), proc.stderr
    assert "╭" not in proc.stderr and "Usage:" not in proc.stderr


def test_a_group_without_its_command_shows_the_groups_help(home: Path) -> None:
    proc = run_toolvet("call")
    assert proc.returncode == 2 and "Commands:" in proc.stderr and "approve" in proc.stderr
