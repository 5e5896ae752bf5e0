"""Discovery benchmark: toolvet's discovery passes against plain JSON-RPC listing of the same upstreams.

One upstream process (``bench/farm.py`` under uvicorn) serves N virtual MCP servers of M tools each at
``/s/{i}/mcp`` on 127.0.0.1 (2026-07-28 stateless wire). In one run this measures:

1. baseline: every server's listing fetched with plain JSON-RPC (``server/discover`` + ``tools/list``
   pages, json-decoded) over one shared ``httpx2.AsyncClient`` at the same concurrency, no registry;
   run three times, before the first pass, between the passes and after them (the median counts), so
   a change in the machine's speed during the run reaches the baseline as it reaches the passes;
2. first pass: ``services.discovery.discover`` on a fresh database with the N servers registered;
3. no-change pass: a second ``discover``, with the rows it writes counted per table and statement kind;
4. peak RSS of this process plus that of toolvet's discovery writer process.

Every phase also reports the farm's CPU (read from ``/proc``; 0 where there is none), and each pass the
CPU of all three processes over the cores this process may run on: on a machine whose cores the farm
shares, that quotient is the least wall time the pass could take, however its work were spread.

A sweep of this size writes through toolvet's discovery writer process (``services.discovery_writer``):
CPU is reported for this process and for the writer, and the no-change pass's writes are counted in
both (statement events on each process's engine). Each pass also reports how long the writer's steps
waited (their wall time over their CPU time, ``discovery_writer.busy``): SQLite's write lock held by
another connection, the disk, or the other core's work.

With ``--findings-cost R`` it measures instead what the findings cost a first pass: R rounds, each a
first pass on a fresh registry with the findings and one without them (``bench/findings_off.py``, in
this process and in the writer process), in alternating order, and the ratio of the median wall times
against the target (at most 15 % slower). ``--distinct-names`` serves every server's tools under names
of its own: the farm is otherwise a fleet (each name borne by a quarter of the servers, a tool nearly
copying those of its name), the cross-server check's worst case. ``--same-software`` names one
software for every server, the operator's word that they are deployments of one product: their tools
are then not compared with each other.

It reports figures beside their targets and exits 0 whether or not a target is met; it exits non-zero
only when something broke (a run not ``ok``, a wrong tool count, the farm not starting).

Run: ``python bench/discovery.py [--servers 1000] [--tools 50] [--concurrency 16] [--json]``;
``python bench/discovery.py --servers 200 --findings-cost 3 [--distinct-names | --same-software]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

import anyio
import anyio.to_thread
import httpx2
from cryptography.fernet import Fernet
from sqlalchemy import event, func, select

from findings_off import findings_off, switch_off
from toolvet.db.models import Tool
from toolvet.schemas.tools import DiscoveryRunOut
from toolvet.services import servers
from toolvet.services.auth import Principal, Role
from toolvet.services.context import Context
from toolvet.services.discovery_writer import ProcessWriter, busy, child_context
from toolvet.settings import Settings

FARM: Final = Path(__file__).with_name("farm.py")
FARM_START_TIMEOUT: Final = 120.0  # the farm serialises every answer before it opens its port
FARM_STOP_TIMEOUT: Final = 10.0
PROTOCOL_VERSION: Final = "2026-07-28"
ADMIN: Final = Principal(actor="bench:admin", role=Role.ADMIN)

BASELINE_RUNS: Final = 3  # before, between and after the passes: their median is steadier than one run

TARGET_FIRST_PASS: Final = 3.0  # first pass / baseline
TARGET_NO_CHANGE: Final = 2.0  # no-change pass / baseline
TARGET_RSS_MB: Final = 400.0
TARGET_FINDINGS_COST: Final = 1.15  # first pass with the findings / without them
#: "off" in the environment of a writer process started for a registry without the findings: the writer
#: (spawned) imports this script again as its main module, and switches them off there too.
FINDINGS_ENV: Final = "TOOLVET_BENCH_FINDINGS"

if os.environ.get(FINDINGS_ENV) == "off":
    switch_off()


class BenchError(Exception):
    """Something broke: the benchmark's figures would mean nothing."""


@dataclass(frozen=True)
class Config:
    """What one benchmark run does."""

    servers: int
    tools: int
    page_size: int
    concurrency: int
    database_url: str | None
    as_json: bool
    distinct_names: bool = False  # no tool name shared by two servers (the farm is otherwise a fleet)
    findings_cost: int = 0  # rounds of first passes with and without the findings (0: the passes)
    same_software: bool = False  # one software named for every server: the operator's word they are deployments


@dataclass
class Phase:
    """One timed phase: how long it took (wall, and CPU of this process) for how many tools, and the peak
    RSS once it was over."""

    name: str
    seconds: float
    cpu_seconds: float
    tools: int
    peak_rss_mb: float
    writer_cpu_seconds: float = 0.0  # CPU of toolvet's discovery writer process in this phase
    writer_wait_seconds: float = 0.0  # wall time of the writer's steps over their CPU time: its waits
    farm_cpu_seconds: float = 0.0  # CPU of the farm subprocess in this phase

    @property
    def all_cpu_seconds(self) -> float:
        """CPU of this process, the writer and the farm together."""
        return self.cpu_seconds + self.writer_cpu_seconds + self.farm_cpu_seconds

    @property
    def tools_per_second(self) -> float:
        return self.tools / self.seconds if self.seconds > 0 else float("inf")


@dataclass
class WriteRow:
    """Rows one pass wrote to one table with one kind of statement, against what was expected."""

    table: str
    kind: str
    statements: int
    rows: int
    expected_rows: int | None  # None: no write of this kind was expected at all
    # Writes whose count follows the clock, not the registry (a lease renewal, once a beat while the pass
    # runs): judged by how many statements, at most this many; their rows are the leases held then.
    most_statements: int | None = None

    @property
    def verdict(self) -> str:
        if self.most_statements is not None:
            return "ok (beats)" if self.statements <= self.most_statements else "TOO MANY"
        if self.expected_rows is None:
            return "UNEXPECTED"
        return "ok" if self.rows == self.expected_rows else "DIFFERS"


@dataclass
class Target:
    """One target and whether it was met."""

    name: str
    value: float
    limit: float
    unit: str

    @property
    def passed(self) -> bool:
        return self.value <= self.limit


@dataclass
class Report:
    """Everything one run measured."""

    config: Config
    baseline: Phase
    first_pass: Phase
    no_change_pass: Phase
    writes: list[WriteRow] = field(default_factory=list)
    baseline_runs: list[float] = field(default_factory=list)  # wall seconds: before, between, after

    @property
    def peak_rss_mb(self) -> float:
        return self.no_change_pass.peak_rss_mb

    def ratio(self, phase: Phase) -> float:
        """``phase``'s wall time over the baseline's."""
        return phase.seconds / self.baseline.seconds

    def targets(self) -> list[Target]:
        return [
            Target("first pass / baseline", self.ratio(self.first_pass), TARGET_FIRST_PASS, "x"),
            Target("no-change / baseline", self.ratio(self.no_change_pass), TARGET_NO_CHANGE, "x"),
            Target("peak RSS", self.peak_rss_mb, TARGET_RSS_MB, "MB"),
        ]


def peak_rss_mb() -> float:
    """This process's peak resident set size so far (``ru_maxrss`` is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ------------------------------------------------------------------------------------------- farm


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _wait_ready(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    """Poll the farm's port until it accepts connections; fail if it exits or takes too long."""
    deadline = time.monotonic() + FARM_START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise BenchError(f"farm exited with code {process.returncode}: {log.read_text()[-2000:]}")
        if _accepts(port):
            return
        time.sleep(0.1)
    raise BenchError(f"farm did not open port {port} within {FARM_START_TIMEOUT:g} s")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(FARM_STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(FARM_STOP_TIMEOUT)


@dataclass(frozen=True)
class Farm:
    """The running farm: its base URL and process."""

    base: str
    pid: int

    def cpu_seconds(self) -> float:
        """The farm's CPU time so far (user + system, from ``/proc``); 0 where ``/proc`` has none."""
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@contextmanager
def running_farm(config: Config, workdir: Path) -> Iterator[Farm]:
    """Start the farm subprocess, wait (bounded) until it listens, yield it, stop it on exit."""
    port = _free_port()
    log = workdir / "farm.log"
    command = [sys.executable, str(FARM), "--port", str(port), "--servers", str(config.servers),
               "--tools", str(config.tools), "--page-size", str(config.page_size),
               *(["--distinct-names"] if config.distinct_names else [])]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    try:
        _wait_ready(process, port, log)
        yield Farm(f"http://127.0.0.1:{port}", process.pid)
    finally:
        _stop(process)


def server_url(base: str, index: int) -> str:
    return f"{base}/s/{index}/mcp"


# --------------------------------------------------------------------------------------- baseline


def _meta() -> dict[str, Any]:
    return {"io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
            "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}}


async def _rpc(
    client: httpx2.AsyncClient, url: str, request_id: int, method: str, params: dict[str, Any]
) -> Any:
    """One plain JSON-RPC POST; the decoded ``result``."""
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": _meta()}}
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json",
               "mcp-protocol-version": PROTOCOL_VERSION, "mcp-method": method}
    body = json.dumps(message, separators=(",", ":")).encode()
    response = await client.post(url, content=body, headers=headers)
    response.raise_for_status()
    reply = json.loads(response.content)
    if "error" in reply:
        raise BenchError(f"{url} {method}: {reply['error']}")
    return reply["result"]


async def _plain_listing(client: httpx2.AsyncClient, url: str) -> int:
    """``server/discover`` then every ``tools/list`` page; the number of tools listed."""
    await _rpc(client, url, 1, "server/discover", {})
    count, cursor, request_id = 0, None, 2
    while True:
        params: dict[str, Any] = {} if cursor is None else {"cursor": cursor}
        result = await _rpc(client, url, request_id, "tools/list", params)
        count += len(result["tools"])
        cursor = result.get("nextCursor")
        if cursor is None:
            return count
        request_id += 1


def _pool(concurrency: int) -> httpx2.AsyncClient:
    """A client sized exactly as ``services.discovery.shared_http_client`` sizes toolvet's."""
    size = max(concurrency * 2, 32)
    return httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, connect=10.0),
                              limits=httpx2.Limits(max_connections=size, max_keepalive_connections=size))


async def _baseline_once(config: Config, farm: Farm) -> Phase:
    """List every server with plain JSON-RPC, ``concurrency`` at a time, as ``run_passes`` schedules."""
    counts = [0] * config.servers
    limiter = anyio.CapacityLimiter(config.concurrency)

    async def one(index: int, client: httpx2.AsyncClient) -> None:
        async with limiter:
            counts[index] = await _plain_listing(client, server_url(farm.base, index))

    async with _pool(config.concurrency) as client:
        started, cpu, farm_cpu = time.perf_counter(), time.process_time(), farm.cpu_seconds()
        async with anyio.create_task_group() as tg:
            for index in range(config.servers):
                tg.start_soon(one, index, client)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        farm_cpu = farm.cpu_seconds() - farm_cpu
    total = sum(counts)
    if total != config.servers * config.tools:
        raise BenchError(f"baseline listed {total} tools, expected {config.servers * config.tools}")
    return Phase("baseline", seconds, cpu, total, peak_rss_mb(), farm_cpu_seconds=farm_cpu)


def median_run(runs: list[Phase]) -> Phase:
    """The baseline run of median wall time (the lower middle one of an even count)."""
    median = statistics.median_low(r.seconds for r in runs)
    return next(r for r in runs if r.seconds == median)


# --------------------------------------------------------------------------------------- registry


def open_registry(config: Config, home: Path) -> Context:
    """A fresh, migrated toolvet database."""
    settings = Settings(home=home, database_url=config.database_url, discovery_concurrency=config.concurrency,
                        secret_key=Fernet.generate_key().decode())
    return Context.open(settings)


def register_servers(ctx: Context, config: Config, base: str) -> None:
    """Register the farm's N servers (not timed)."""
    for index in range(config.servers):
        servers.create_server(ctx, ADMIN, {"name": f"farm-{index:05d}", "transport": "streamable-http",
                                           "url": server_url(base, index),
                                           **({"software": "farm"} if config.same_software else {})})


def stored_tools(ctx: Context) -> int:
    with ctx.db.transaction() as session:
        return session.scalar(select(func.count()).select_from(Tool)) or 0


def _check_runs(runs: list[DiscoveryRunOut], config: Config, *, first: bool) -> None:
    """Raise BenchError unless every server was listed ``ok`` with the expected outcome."""
    if len(runs) != config.servers:
        raise BenchError(f"{len(runs)} runs for {config.servers} servers")
    bad = [r for r in runs if r.status != "ok"]
    if bad:
        raise BenchError(f"{len(bad)} runs not ok; first: {bad[0].server} {bad[0].status}: {bad[0].error}")
    expected = config.tools
    for run in runs:
        outcome = (run.added, run.changed, run.unchanged, run.retired, run.rejected)
        wanted = (expected, 0, 0, 0, 0) if first else (0, 0, expected, 0, 0)
        if outcome != wanted:
            raise BenchError(
                f"{run.server}: added/changed/unchanged/retired/rejected {outcome}, expected {wanted}"
            )


def _writer_usage() -> tuple[float, float, float]:
    """(CPU seconds, peak RSS in MB, seconds its steps waited) of the process this runs in (called in the
    writer process). Waited: the steps' wall time over their CPU time (SQLite's write lock, the disk)."""
    wall, cpu = busy()
    return time.process_time(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, wall - cpu


async def writer_usage(ctx: Context) -> tuple[float, float, float]:
    """The writer process's CPU, peak RSS and waits so far; zeros when the context has none."""
    writer = ctx.discovery_writer
    if not isinstance(writer, ProcessWriter) or not writer.alive:
        return 0.0, 0.0, 0.0
    return await writer.call(_writer_usage)


async def timed_discover(ctx: Context, config: Config, farm: Farm, name: str, *, first: bool) -> Phase:
    """Time one ``discover`` of every enabled auto server and check its runs and the stored tool count."""
    # Imported here, not at the top: the writer process (spawn) imports this script again as its main
    # module, and should pay what it pays under the ``toolvet`` command (whose main module is the CLI),
    # not the MCP SDK that only the fetching side needs. Imported before the clock starts, as the CLI
    # and ``toolvet serve`` import it before any pass.
    from toolvet.services import discovery

    writer_cpu, _, writer_waited = await writer_usage(ctx)
    started, cpu, farm_cpu = time.perf_counter(), time.process_time(), farm.cpu_seconds()
    runs = await discovery.discover(ctx, ADMIN)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    farm_cpu = farm.cpu_seconds() - farm_cpu
    writer_cpu_after, writer_rss, writer_waited_after = await writer_usage(ctx)
    _check_runs(runs, config, first=first)
    total = stored_tools(ctx)
    if total != config.servers * config.tools:
        raise BenchError(f"{name}: {total} tools stored, expected {config.servers * config.tools}")
    return Phase(name, seconds, cpu, sum(r.added + r.unchanged for r in runs), peak_rss_mb() + writer_rss,
                 writer_cpu_after - writer_cpu, farm_cpu, writer_waited_after - writer_waited)


# ------------------------------------------------------------------------------------ write count


_WRITE = re.compile(
    r"""^\s*(?:(INSERT)\s+(?:OR\s+\w+\s+)?INTO|(UPDATE)(?:\s+OR\s+\w+)?|(DELETE)\s+FROM)\s+"?([\w.]+)"?""",
    re.IGNORECASE,
)


def classify(statement: str) -> tuple[str, str] | None:
    """(table, kind) of an INSERT, UPDATE or DELETE statement, else None."""
    match = _WRITE.match(statement)
    if match is None:
        return None
    kind = next(k for k in match.groups()[:3] if k)
    return match.group(4).lower(), kind.upper()


_RETURNING = re.compile(r"\bRETURNING\b", re.IGNORECASE)


class WriteCounter:
    """Sums ``cursor.rowcount`` of every write statement on an engine, by (table, statement kind).

    A write with RETURNING is counted once its rows have been read: sqlite3 reports rowcount 0 for it
    until then (its rows are produced as they are fetched), so its cursor is kept and read at the end.
    """

    def __init__(self) -> None:
        self.rows: Counter[tuple[str, str]] = Counter()
        self.statements: Counter[tuple[str, str]] = Counter()
        self.returning: list[tuple[tuple[str, str], Any]] = []

    def __call__(self, conn: Any, cursor: Any, statement: str, parameters: Any, context: Any,
                 executemany: bool) -> None:
        key = classify(statement)
        if key is not None:
            self.statements[key] += 1
            if _RETURNING.search(statement):
                self.returning.append((key, cursor))
            else:
                self.rows[key] += max(cursor.rowcount, 0)

    def settle(self) -> None:
        """Add the rows of the RETURNING writes (read by now), once."""
        for key, cursor in self.returning:
            self.rows[key] += max(cursor.rowcount, 0)
        self.returning.clear()

    @contextmanager
    def attached(self, engine: Any) -> Iterator[WriteCounter]:
        event.listen(engine, "after_cursor_execute", self)
        try:
            yield self
        finally:
            event.remove(engine, "after_cursor_execute", self)

    def add(self, rows: dict[tuple[str, str], int], statements: dict[tuple[str, str], int]) -> None:
        """Add counts made elsewhere (in the writer process)."""
        self.rows.update(rows)
        self.statements.update(statements)

    def breakdown(self, expected: dict[tuple[str, str], int],
                  beats: dict[tuple[str, str], int] | None = None) -> list[WriteRow]:
        """Every kind of write seen or expected, expected ones first; ``beats``: the writes made on a clock
        (at most so many statements), listed only when seen."""
        self.settle()
        beats = beats or {}
        keys = list(expected) + sorted(k for k in self.statements if k not in expected)
        return [WriteRow(table, kind, self.statements[(table, kind)], self.rows[(table, kind)],
                         expected.get((table, kind)), beats.get((table, kind))) for table, kind in keys]


_WRITER_COUNTER: WriteCounter | None = None


def _count_writer_writes() -> None:
    """Start counting the writes of the writer process (called in it)."""
    global _WRITER_COUNTER
    _WRITER_COUNTER = WriteCounter()
    event.listen(child_context().db.engine, "after_cursor_execute", _WRITER_COUNTER)


def _writer_writes() -> tuple[dict[tuple[str, str], int], dict[tuple[str, str], int]]:
    """Stop counting in the writer process; its (rows, statements) by (table, kind) (called in it)."""
    counter = _WRITER_COUNTER
    if counter is None:
        return {}, {}
    event.remove(child_context().db.engine, "after_cursor_execute", counter)
    counter.settle()
    return dict(counter.rows), dict(counter.statements)


def expected_no_change_writes(config: Config) -> dict[tuple[str, str], int]:
    """What a pass that finds nothing new should write, and nothing else."""
    n = config.servers
    return {("tools", "UPDATE"): n * config.tools, ("discovery_runs", "INSERT"): n, ("servers", "UPDATE"): n,
            ("leases", "INSERT"): n, ("leases", "DELETE"): n}


def renewal_beats(seconds: float, lease_seconds: float) -> dict[tuple[str, str], int]:
    """The lease renewals a sweep of ``seconds`` may make: one statement (every lease the process holds)
    each third of ``lease_seconds`` while it runs (``services.leases.keep_renewed``), one more for a
    beat that falls as the pass ends."""
    return {("leases", "UPDATE"): int(seconds // (lease_seconds / 3)) + 1}


# ------------------------------------------------------------------------------------------- run


async def measure(config: Config) -> Report:
    """The whole benchmark: farm up, baseline, two discovery passes, farm down."""
    with tempfile.TemporaryDirectory(prefix="toolvet-bench-") as tmp:
        workdir = Path(tmp)
        with running_farm(config, workdir) as farm:
            baselines = [await _baseline_once(config, farm)]
            ctx = await anyio.to_thread.run_sync(open_registry, config, workdir)
            try:
                await anyio.to_thread.run_sync(register_servers, ctx, config, farm.base)
                first = await timed_discover(ctx, config, farm, "first pass", first=True)
                baselines.append(await _baseline_once(config, farm))
                writer = ctx.discovery_writer
                in_writer = isinstance(writer, ProcessWriter) and writer.alive
                if in_writer:
                    await writer.call(_count_writer_writes)
                with WriteCounter().attached(ctx.db.engine) as counter:
                    second = await timed_discover(ctx, config, farm, "no-change pass", first=False)
                if in_writer:
                    counter.add(*await writer.call(_writer_writes))
                baselines.append(await _baseline_once(config, farm))
                beats = renewal_beats(second.seconds, ctx.settings.lease_seconds)
            finally:
                ctx.close()
    assert len(baselines) == BASELINE_RUNS
    writes = counter.breakdown(expected_no_change_writes(config), beats)
    return Report(config, median_run(baselines), first, second, writes, [b.seconds for b in baselines])


# ----------------------------------------------------------------------------- what findings cost


@dataclass
class FindingsCost:
    """First passes with the findings and without them, in the order they ran."""

    config: Config
    runs: list[tuple[bool, Phase]]  # (with the findings, the first pass)

    def walls(self, findings: bool) -> list[float]:
        return [p.seconds for f, p in self.runs if f is findings]

    def writer_cpus(self, findings: bool) -> list[float]:
        return [p.writer_cpu_seconds for f, p in self.runs if f is findings]

    @property
    def ratio(self) -> float:
        """Median wall time of a first pass with the findings over that of one without."""
        return statistics.median(self.walls(True)) / statistics.median(self.walls(False))

    @property
    def writer_ratio(self) -> float | None:
        """The same for the writer process's CPU; None when the passes had none (a sweep too small)."""
        without = statistics.median(self.writer_cpus(False))
        return statistics.median(self.writer_cpus(True)) / without if without > 0 else None

    @property
    def target(self) -> Target:
        return Target("first pass with findings / without", self.ratio, TARGET_FINDINGS_COST, "x")


async def _first_pass(config: Config, farm: Farm, home: Path, *, findings: bool) -> Phase:
    """One first pass on a fresh registry in ``home``, with the findings or without them."""
    if not findings:
        os.environ[FINDINGS_ENV] = "off"  # for the writer process the pass starts
    try:
        with findings_off() if not findings else contextlib.nullcontext():
            ctx = await anyio.to_thread.run_sync(open_registry, config, home)
            try:
                await anyio.to_thread.run_sync(register_servers, ctx, config, farm.base)
                return await timed_discover(ctx, config, farm, "with findings" if findings else "without",
                                            first=True)
            finally:
                ctx.close()
    finally:
        os.environ.pop(FINDINGS_ENV, None)


async def measure_findings_cost(config: Config) -> FindingsCost:
    """``config.findings_cost`` rounds of a first pass with the findings and one without, alternating
    which goes first, each on a registry of its own."""
    runs: list[tuple[bool, Phase]] = []
    with tempfile.TemporaryDirectory(prefix="toolvet-bench-") as tmp, running_farm(config, Path(tmp)) as farm:
        for number in range(config.findings_cost):
            for findings in (True, False) if number % 2 == 0 else (False, True):
                home = Path(tmp) / f"round-{number}-{'on' if findings else 'off'}"
                home.mkdir()
                runs.append((findings, await _first_pass(config, farm, home, findings=findings)))
    return FindingsCost(config, runs)


def render_findings_cost(cost: FindingsCost) -> str:
    c = cost.config
    names = ("every server's names its own" if c.distinct_names else
             "names shared by a fleet of servers" + (", all named as running one software" if c.same_software else ""))
    lines = [f"toolvet discovery benchmark, what the findings cost a first pass: {c.servers} servers x "
             f"{c.tools} tools, {names}, {c.findings_cost} rounds, concurrency {c.concurrency}", "",
             f"{'first pass':<16}{'wall':>11}{'CPU':>11}{'writer':>11}{'farm':>11}{'waited':>11}"]
    for _, p in cost.runs:
        lines.append(f"{p.name:<16}{p.seconds:>9.2f} s{p.cpu_seconds:>9.2f} s{p.writer_cpu_seconds:>9.2f} s"
                     f"{p.farm_cpu_seconds:>9.2f} s{p.writer_wait_seconds:>9.2f} s")
    t = cost.target
    lines += ["", f"with findings / without (medians): wall {cost.ratio:.2f}x (target <= {t.limit:g}x: "
              f"{'PASS' if t.passed else 'FAIL'})"
              + (f", writer CPU {cost.writer_ratio:.2f}x" if cost.writer_ratio is not None else
                 " (no writer process: the sweep is below discovery_writer_min_servers)")]
    return "\n".join(lines)


def render_findings_cost_json(cost: FindingsCost) -> str:
    config = {k: v for k, v in asdict(cost.config).items() if k != "as_json"}
    writer = cost.writer_ratio
    return json.dumps({"config": config, "runs": [{"findings": f, **asdict(p)} for f, p in cost.runs],
                       "wall_ratio": round(cost.ratio, 3), "writer_cpu_ratio": writer and round(writer, 3),
                       "target": {**asdict(cost.target), "passed": cost.target.passed}}, indent=2)


# ---------------------------------------------------------------------------------------- output


def _phase_line(phase: Phase, baseline: Phase, target: Target | None) -> str:
    ratio = phase.seconds / baseline.seconds
    limit = f"<= {target.limit:g}x" if target else "-"
    verdict = ("PASS" if target.passed else "FAIL") if target else "-"
    times = (f"{phase.seconds:>9.2f} s{phase.cpu_seconds:>9.2f} s{phase.writer_cpu_seconds:>9.2f} s"
             f"{phase.farm_cpu_seconds:>9.2f} s")
    return f"{phase.name:<16}{times}{phase.tools_per_second:>11,.0f}{ratio:>10.2f}x{limit:>11}  {verdict}"


def render_table(report: Report) -> str:
    """The human-readable report."""
    c = report.config
    first_target, no_change_target, rss_target = report.targets()
    url = c.database_url or "sqlite (fresh file in a temp dir)"
    lines = [
        f"toolvet discovery benchmark: {c.servers} servers x {c.tools} tools ({c.page_size} per page), "
        f"concurrency {c.concurrency}, database {url}",
        "",
        f"{'phase':<16}{'wall':>11}{'CPU':>11}{'writer':>11}{'farm':>11}{'tools/s':>11}{'vs base':>11}"
        f"{'target':>11}  result",
        _phase_line(report.baseline, report.baseline, None),
        _phase_line(report.first_pass, report.baseline, first_target),
        _phase_line(report.no_change_pass, report.baseline, no_change_target),
        f"{'peak RSS':<16}{report.peak_rss_mb:>8.0f} MB{'':>55}{f'<= {rss_target.limit:g} MB':>11}  "
        f"{'PASS' if rss_target.passed else 'FAIL'}",
        f"(baseline: median of {BASELINE_RUNS} runs, before, between and after the passes: "
        + ", ".join(f"{s:.2f} s" for s in report.baseline_runs) + ";",
        " CPU: this process's CPU time, all threads; writer: CPU of toolvet's discovery writer process;",
        " farm: CPU of the upstream farm; vs base: wall / baseline wall; peak RSS: this process + writer)",
        *(f"{p.name}: CPU of all three processes {p.all_cpu_seconds:.2f} s, over {cores()} cores "
          f"{p.all_cpu_seconds / cores():.2f} s (the least wall time any spread of that work could take here)"
          for p in (report.first_pass, report.no_change_pass)),
        *(f"{p.name}: the writer's steps waited {p.writer_wait_seconds:.2f} s (their wall time over their CPU "
          "time: SQLite's write lock, the disk, the other core's work)"
          for p in (report.first_pass, report.no_change_pass)),
        "",
        "rows written by the no-change pass:",
        f"  {'table':<16}{'kind':<8}{'statements':>11}{'rows':>10}{'expected':>10}  verdict",
    ]
    for w in report.writes:
        expected = "-" if w.expected_rows is None else str(w.expected_rows)
        lines.append(f"  {w.table:<16}{w.kind:<8}{w.statements:>11}{w.rows:>10}{expected:>10}  {w.verdict}")
    return "\n".join(lines)


def render_json(report: Report) -> str:
    """The same figures as JSON."""
    def phase(p: Phase) -> dict[str, Any]:
        return {**asdict(p), "tools_per_second": round(p.tools_per_second, 1),
                "all_cpu_seconds": round(p.all_cpu_seconds, 3),
                "ratio_to_baseline": round(report.ratio(p), 3)}

    config = {k: v for k, v in asdict(report.config).items() if k != "as_json"}
    return json.dumps({
        "config": config,
        "baseline": phase(report.baseline),
        "baseline_runs_seconds": [round(seconds, 3) for seconds in report.baseline_runs],
        "first_pass": phase(report.first_pass),
        "no_change_pass": phase(report.no_change_pass),
        "peak_rss_mb": round(report.peak_rss_mb, 1),
        "targets": [{**asdict(t), "passed": t.passed} for t in report.targets()],
        "no_change_writes": [{**asdict(w), "verdict": w.verdict} for w in report.writes],
    }, indent=2)


def parse_args(argv: list[str] | None = None) -> Config:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--servers", type=int, default=1000, help="virtual upstream servers (N)")
    parser.add_argument("--tools", type=int, default=50, help="tools per server (M)")
    parser.add_argument("--page-size", type=int, default=50, help="tools per tools/list page")
    parser.add_argument("--concurrency", type=int, default=16, help="servers listed at once")
    parser.add_argument("--database-url", default=None,
                        help="an EMPTY database to use (default: a fresh SQLite file in a temp dir)")
    parser.add_argument("--json", dest="as_json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--distinct-names", action="store_true",
                        help="every server's tools under names of its own (default: a fleet sharing names)")
    parser.add_argument("--same-software", action="store_true",
                        help="name one software for every server (their tools are then not compared with each other)")
    parser.add_argument("--findings-cost", type=int, default=0, metavar="R",
                        help="instead of the passes: R rounds of a first pass with the findings and without")
    args = parser.parse_args(argv)
    for name in ("servers", "tools", "page_size", "concurrency"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.findings_cost < 0:
        parser.error("--findings-cost must be at least 0")
    if args.findings_cost and args.database_url:
        parser.error("--findings-cost opens a fresh SQLite registry per pass; it takes no --database-url")
    return Config(args.servers, args.tools, args.page_size, args.concurrency, args.database_url, args.as_json,
                  args.distinct_names, args.findings_cost, args.same_software)


def main(argv: list[str] | None = None) -> int:
    config = parse_args(argv)
    try:
        if config.findings_cost:
            cost = anyio.run(measure_findings_cost, config)
            print(render_findings_cost_json(cost) if config.as_json else render_findings_cost(cost))
            return 0
        report = anyio.run(measure, config)
    except BenchError as exc:
        print(f"benchmark broken: {exc}", file=sys.stderr)
        return 1
    print(render_json(report) if config.as_json else render_table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
