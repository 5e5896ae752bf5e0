"""CLI start-up benchmark: the wall time of ``toolvet`` commands beside ``python -c pass``.

In one run, interleaved round by round so every figure sees the same machine, each command line is
started as a fresh process (``python -m toolvet ...``, as the installed script runs it) on a SQLite
database in a temporary home holding one manual server with ``--tools`` hand-registered tools:

- ``python -c pass``: the interpreter alone, the baseline;
- ``toolvet --version`` and ``toolvet --help``: no command module imported;
- ``toolvet tool list``, ``toolvet server list``, ``toolvet call list``, ``toolvet tool show``,
  ``toolvet audit``, ``toolvet check`` and ``toolvet export``: commands that open the database and
  read the registry.

It prints the median wall time of each over ``--rounds`` rounds and its ratio to the baseline, and
the limits toolvet holds itself to (``--version``/``--help`` under 0.25 s, every command that reads
the registry under 0.6 s on the 2-core machine it is developed on). ``--before SRC`` runs ``--version``
and every read of another source tree too (its ``src`` directory first on ``PYTHONPATH``, e.g. an
older commit from ``git archive``), in the same rounds, for a before/after ratio. It exits 0 whatever the figures;
non-zero only when a command fails.

Run: ``python bench/cli.py [--rounds 9] [--tools 50] [--before OLD/src] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS: dict[str, list[str]] = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "toolvet --version": [sys.executable, "-m", "toolvet", "--version"],
    "toolvet --help": [sys.executable, "-m", "toolvet", "--help"],
    "toolvet tool list": [sys.executable, "-m", "toolvet", "tool", "list"],
    "toolvet server list": [sys.executable, "-m", "toolvet", "server", "list"],
    "toolvet call list": [sys.executable, "-m", "toolvet", "call", "list"],
    "toolvet tool show": [sys.executable, "-m", "toolvet", "tool", "show", "bench/t000"],
    "toolvet audit": [sys.executable, "-m", "toolvet", "audit"],
    "toolvet check": [sys.executable, "-m", "toolvet", "check", "bench/t000", "--user", "bench"],
    "toolvet export": [sys.executable, "-m", "toolvet", "export"],
}
#: The commands that read the registry: each answers within :data:`READ_LIMIT`.
READS = ("toolvet tool list", "toolvet server list", "toolvet call list", "toolvet tool show", "toolvet audit",
         "toolvet check", "toolvet export")
READ_LIMIT = 0.6
LIMITS = {"toolvet --version": 0.25, "toolvet --help": 0.25} | dict.fromkeys(READS, READ_LIMIT)
SCHEMA = '{"type": "object", "properties": {"q": {"type": "string"}}}'

BEFORE = ("toolvet --version", *READS)


def run(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, check=False)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[2:])} failed ({done.returncode}): {done.stderr.strip()}")
    return took


def seed(env: dict[str, str], tools: int) -> None:
    toolvet = [sys.executable, "-m", "toolvet"]
    run([*toolvet, "server", "add", "bench", "--url", "http://127.0.0.1:9/mcp", "--manual"], env)
    for n in range(tools):
        run([*toolvet, "tool", "add", "bench", "--name", f"t{n:03}", "--input-schema", SCHEMA], env)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--tools", type=int, default=50)
    parser.add_argument("--before", type=Path, help="another source tree's src/ to time beside this one")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if args.tools < 1:
        parser.error("--tools must be at least 1: tool show and check read the first one")
    commands = dict(COMMANDS)
    if args.before is not None:
        commands |= {f"before: {name}": ["env", f"PYTHONPATH={args.before.resolve()}", *COMMANDS[name]]
                     for name in BEFORE}
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "TOOLVET_HOME": home, "TOOLVET_DATABASE_URL": f"sqlite:///{Path(home) / 'db.sqlite3'}"}
        env.pop("TOOLVET_DEBUG", None)
        seed(env, args.tools)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, argv in commands.items():
                times[name].append(run(argv, env))
    base = statistics.median(times["python -c pass"])
    figures = {name: {"median_s": round(statistics.median(t), 4), "ratio": round(statistics.median(t) / base, 1)}
               for name, t in times.items()}
    if args.json:
        print(json.dumps({"rounds": args.rounds, "tools": args.tools, "figures": figures}, indent=2))
        return 0
    print(f"toolvet CLI start-up: median wall time of {args.rounds} interleaved rounds, {args.tools} tools, SQLite")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for name, figure in figures.items():
        limit = LIMITS.get(name)
        note = f"   (limit {limit:.2f} s: {'within' if figure['median_s'] < limit else 'OVER'})" if limit else ""
        print(f"  {name:<30} {figure['median_s']:7.3f} s  {figure['ratio']:6.1f}x python -c pass{note}")
    for name in BEFORE if args.before is not None else ():
        print(f"  {name}: {figures[f'before: {name}']['median_s'] / figures[name]['median_s']:.1f}x faster than before")
    return 0


if __name__ == "__main__":
    sys.exit(main())
