"""What toolvet counts for ``GET /metrics`` (Prometheus text, through ``prometheus_client``).

Two kinds of figures, so that several processes or replicas on one database add up:

- per-process instruments (calls by outcome, call latency, discovery pass durations, the upstream
  pool's sessions), kept in this module's registry; with ``PROMETHEUS_MULTIPROC_DIR`` set (before
  toolvet starts) they are kept in that directory's files instead, and a scrape of any process adds
  up every process's (``prometheus_client``'s multiprocess mode);
- what the database holds (tools by review state and held, pending calls, discovery runs by status),
  read at scrape time by :class:`~toolvet.services.metrics_db.DatabaseCollector`, so every replica
  answers the same figures.

Recording is a label lookup and an increment: it costs the call path about a microsecond.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any, Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

#: The text format ``GET /metrics`` answers in.
CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"
MULTIPROC_ENV: Final = "PROMETHEUS_MULTIPROC_DIR"

#: Latency buckets (seconds): toolvet's own part of a call is sub-millisecond; an upstream's is anything.
LATENCY_BUCKETS: Final = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                          1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
PASS_BUCKETS: Final = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)

#: The outcomes of a call, as ``toolvet_calls_total`` labels them.
RAN, REFUSED, DENIED, PENDING, UPSTREAM_FAILURE, INVALID, CANCELLED = (
    "ran", "refused", "denied", "pending", "upstream_failure", "invalid", "cancelled")

PROCESS = CollectorRegistry(auto_describe=True)

CALLS = Counter("toolvet_calls", "Calls through toolvet by server, tool and outcome.",
                ("server", "tool", "outcome"), registry=PROCESS)
CALL_OWN_SECONDS = Histogram(
    "toolvet_call_toolvet_seconds", "Time toolvet itself spent on a call that ran (policy, checks, "
    "records), the upstream's time excluded.", ("server",), buckets=LATENCY_BUCKETS, registry=PROCESS)
CALL_UPSTREAM_SECONDS = Histogram(
    "toolvet_call_upstream_seconds", "Time a call that ran spent in its upstream server's request.",
    ("server",), buckets=LATENCY_BUCKETS, registry=PROCESS)
PASS_SECONDS = Histogram(
    "toolvet_discovery_pass_seconds", "Duration of the discovery passes this process ran, by status.",
    ("status",), buckets=PASS_BUCKETS, registry=PROCESS)
UPSTREAM_SESSIONS = Gauge(
    "toolvet_upstream_sessions", "Open upstream sessions in the call pool, by server.", ("server",),
    multiprocess_mode="livesum", registry=PROCESS)
WEBHOOK_DELIVERIES = Counter(
    "toolvet_webhook_deliveries", "Webhook delivery attempts by outcome (delivered, retried, failed).",
    ("outcome",), registry=PROCESS)

_pool_servers: set[str] = set()


# The labelled children the call path uses, kept: ``labels()`` takes a lock and builds a key each
# time, which cost the call path more than the increment itself.
_outcomes: dict[tuple[str, str, str], Any] = {}
_latencies: dict[str, tuple[Any, Any]] = {}


def call_outcome(server: str, tool: str, outcome: str) -> None:
    key = (server, tool, outcome)
    child = _outcomes.get(key)
    if child is None:
        child = _outcomes[key] = CALLS.labels(server, tool, outcome)
    child.inc()


def call_latency(server: str, own: float, upstream: float) -> None:
    children = _latencies.get(server)
    if children is None:
        children = _latencies[server] = (CALL_OWN_SECONDS.labels(server), CALL_UPSTREAM_SECONDS.labels(server))
    children[0].observe(max(own, 0.0))
    children[1].observe(upstream)


def discovery_pass(status: str, seconds: float) -> None:
    PASS_SECONDS.labels(status).observe(max(seconds, 0.0))


def pool_sessions(counts: Mapping[str, int]) -> None:
    """Set the pool gauge to ``counts`` (servers no longer in it drop to 0)."""
    for server in _pool_servers - counts.keys():
        UPSTREAM_SESSIONS.labels(server).set(0)
    for server, count in counts.items():
        UPSTREAM_SESSIONS.labels(server).set(count)
    _pool_servers.clear()
    _pool_servers.update(counts)


class _ThisProcess(Collector):
    def collect(self) -> Iterable[Metric]:
        return PROCESS.collect()


def render(database: Collector) -> bytes:
    """The scrape: every process's instruments (this one's, or all in the multiprocess directory) and
    what ``database`` reads."""
    registry = CollectorRegistry(auto_describe=False)
    if os.environ.get(MULTIPROC_ENV):
        MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    else:
        registry.register(_ThisProcess())
    registry.register(database)
    return generate_latest(registry)
