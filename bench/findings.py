"""Findings benchmark: how well the checks separate poisoned tools from benign ones, and how fast they run.

In one run, on the labelled corpus (``tests/corpus/``, a tool flagged when it has a ``warning`` or
``high`` finding):

1. precision, recall and false-positive rate over the whole corpus, the tuning part and the held-out part
   (written before the rules and not tuned on), and per category (recall for attack categories, the
   false-positive rate for benign ones), and per rewording batch (``t-reword4-…``, ``h-reword9-…``: its
   attacks caught and its look-alikes flagged by the rules as they are now);
2. the checks' speed on one core, tools per second, beside a baseline measured in the same run on the
   same tools: encoding each definition as JSON (``json.dumps``), which discovery already does once per
   tool. Two sets of tools: the corpus (nearly every tool takes the per-string checks) and the discovery
   benchmark's farm tools with their JSON text (clean tools, the screen's case, what a pass mostly sees),
   and the screen alone (``needed``) on those texts.

3. with ``--writes N``, what the findings cost discovery's write side: the farm's first N servers'
   listings (50 tools each) written as discovery's writer process writes a sweep (``apply_listings``,
   a group of listings per transaction) into a fresh SQLite file, once with the findings
   and once with them off (``static_findings`` and the cross-server call replaced by nothing) as the
   baseline, alternated ``--repeat`` times in this process; CPU seconds of each run and the ratio of
   the medians. On the farm every tool name is shared by about N/4 servers and about a quarter to a third
   of the tools nearly copy another server's, so the cross-server check has work on almost every tool;
   the same is then measured with every server's names made its own (a suffix), where it has none.

4. with ``--translations DIR`` (a gettext locale folder, e.g. Debian's ``/usr/share/locale``), false alarms on
   text other people wrote in other languages: every translated message of every ``.mo`` catalog of the
   languages the rules read, as one tool's description, and every English original once; the count of
   those earning a ``warning`` or ``high`` finding, per language, with the first few shown. The messages
   are programs' own help and error text: imperative, full of "ignore", "do not", users and placeholders.

5. with ``--docstrings``, false alarms on text programmers wrote for people: every distinct docstring of
   the standard library and the installed packages (modules, classes and functions, read with ``ast``;
   test folders left out), each as one tool's description, as MCP servers built from Python functions
   describe their tools. Docstrings are written in the imperative ("Return …", "Suppress warnings …"),
   which is what a rule that reads an order to the model must not mistake; the count flagged, per code,
   with the first few shown.

It exits 0 whatever the figures; the gate on recall and false-positive rate is a test
(``tests/domain/test_findings_corpus.py``).

Run: ``python bench/findings.py [--repeat 5] [--farm 2000] [--writes 200] [--translations DIR] [--docstrings]
[--json]``.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.corpus
sys.path.insert(0, str(ROOT / "bench"))  # farm

from tests.corpus import Entry, Score, findings_of, flagged, load, score  # noqa: E402

from farm import tool_definition  # noqa: E402
from findings_off import findings_off  # noqa: E402
from toolvet.domain.findings import static_findings  # noqa: E402
from toolvet.domain.findings.screen import needed  # noqa: E402
from toolvet.jsontext import compact  # noqa: E402


def _figures(s: Score) -> dict[str, Any]:
    return {"tp": s.tp, "fn": s.fn, "fp": s.fp, "tn": s.tn, "precision": round(s.precision, 3),
            "recall": round(s.recall, 3), "fpr": round(s.fpr, 3)}


def quality(entries: list[Entry], fresh: list[Entry]) -> dict[str, Any]:
    """The figures of the gated corpus (``entries``: all, tuning, held out) and, apart, of the fresh batches."""
    parts = {"all": entries, "tuning": [e for e in entries if e.part == "tuning"],
             "heldout": [e for e in entries if e.part == "heldout"], "fresh": fresh}
    out: dict[str, Any] = {name: _figures(score(es)) for name, es in parts.items()}
    by_category: dict[tuple[str, str], list[Entry]] = defaultdict(list)
    for e in [*entries, *fresh]:
        by_category[(e.part, e.category)].append(e)
    out["categories"] = [
        {"part": part, "category": category, "label": es[0].label, "n": len(es), **_figures(score(es))}
        for (part, category), es in sorted(by_category.items(), key=lambda kv: (kv[1][0].label, kv[0]))
    ]
    out["wrong"] = [{"id": e.id, "label": e.label, "codes": sorted({f["code"] for f in findings_of(e)})}
                    for e in entries if flagged(e) != e.malicious]
    out["batches"] = batches([*entries, *fresh])
    return out


#: A batch's id prefix, and its number (none for the first batch).
_BATCH = re.compile(r"^([th]-reword(\d*))-")


def batches(entries: list[Entry]) -> list[dict[str, Any]]:
    """The rewording batches (ids ``t-reword4-…``, ``h-reword9-…``: docs/findings.md), each with its attacks
    caught and its look-alikes flagged by today's rules."""
    by_batch: dict[tuple[int, str], list[Entry]] = defaultdict(list)
    for e in entries:
        if (m := _BATCH.match(e.id)) is not None:
            by_batch[int(m.group(2) or 1), m.group(1)].append(e)
    out = []
    for (_, name), es in sorted(by_batch.items()):
        attacks = [e for e in es if e.malicious]
        benign = [e for e in es if not e.malicious]
        out.append({"batch": name, "part": es[0].part, "attacks": len(attacks),
                    "caught": sum(flagged(e) for e in attacks), "look_alikes": len(benign),
                    "flagged": sum(flagged(e) for e in benign)})
    return out


def _best(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def speed(entries: list[Entry], farm: int, repeat: int) -> list[dict[str, Any]]:
    corpus = [e.tool for e in entries]
    farm_tools = [tool_definition(i // 50, i % 50) for i in range(farm)]
    farm_texts = [compact(d) for d in farm_tools]
    rows = []
    for name, tools, run in (
        ("corpus", corpus, lambda: [static_findings(d) for d in corpus]),
        ("farm (with JSON text)", farm_tools,
         lambda: [static_findings(d, t) for d, t in zip(farm_tools, farm_texts, strict=True)]),
        ("farm, the screen alone", farm_tools, lambda: [needed(t) for t in farm_texts]),
    ):
        if not tools:
            continue  # --farm 0: no farm rows
        base = _best(lambda tools=tools: [json.dumps(d) for d in tools], repeat)  # type: ignore[misc]
        checks = _best(run, repeat)
        rows.append({"tools": name, "n": len(tools), "checks_tools_per_s": round(len(tools) / checks),
                     "json_tools_per_s": round(len(tools) / base), "checks_over_json": round(checks / base, 2),
                     "checks_us_per_tool": round(checks / len(tools) * 1e6, 1)})
    return rows


def _write_once(servers: int, *, findings: bool, fleet: bool = True) -> float:
    """CPU seconds of writing the first ``servers`` farm listings into a fresh registry. ``fleet``: the
    farm's own names, each shared by many servers; else every server's names made its own (a suffix),
    so the cross-server check finds no tool of another server to compare with."""
    from datetime import UTC, datetime

    from cryptography.fernet import Fernet
    from sqlalchemy import select

    from toolvet.db.models import Server
    from toolvet.domain.listing import Listing
    from toolvet.services import discovery_writes
    from toolvet.services import servers as server_service
    from toolvet.services.auth import Principal, Role
    from toolvet.services.context import Context
    from toolvet.settings import Settings

    admin = Principal(actor="bench:admin", role=Role.ADMIN)
    listings = []
    for index in range(servers):
        tools = [tool_definition(index, j, distinct=not fleet) for j in range(50)]
        digest = hashlib.sha256(compact(tools).encode()).hexdigest()
        listings.append(Listing("ok", tools, None, "2026-07-28", {"name": f"farm-{index}", "version": "1.0.0"},
                                {"tools": {}}, None, 1, digest))
    with tempfile.TemporaryDirectory(prefix="toolvet-bench-") as tmp:
        ctx = Context.open(Settings(home=Path(tmp), secret_key=Fernet.generate_key().decode()))
        try:
            for index in range(servers):
                server_service.create_server(ctx, admin, {"name": f"farm-{index:05d}", "transport": "streamable-http",
                                                          "url": f"http://127.0.0.1:9/s/{index}/mcp"})
            with ctx.db.engine.begin() as conn:
                ids = conn.execute(select(Server.id, Server.name).order_by(Server.id)).all()
            # As discovery's writer process writes a sweep's first pass: the listings waiting together,
            # GROUP_TOOLS tools' worth per transaction (discovery_writes.apply_listings).
            with findings_off() if not findings else contextlib.nullcontext():
                start = time.process_time()
                outcomes = discovery_writes.apply_listings(ctx, [
                    (server_id, name, listing, datetime.now(UTC), "bench", None, False)
                    for (server_id, name), listing in zip(ids, listings, strict=True)])
                spent = time.process_time() - start
            failed = [o for o in outcomes if isinstance(o, Exception)]
            if failed:
                raise RuntimeError(f"{len(failed)} listings failed to apply, the first: {failed[0]!r}")
            return spent
        finally:
            ctx.close()


def write_cost(servers: int, repeat: int, *, fleet: bool = True) -> dict[str, Any]:
    _write_once(2, findings=True)  # first use loads the confusables data and rapidfuzz, as a writer does once
    off: list[float] = []
    on: list[float] = []
    for _ in range(repeat):
        off.append(_write_once(servers, findings=False, fleet=fleet))
        on.append(_write_once(servers, findings=True, fleet=fleet))
    return {"servers": servers, "tools": servers * 50, "fleet": fleet, "off_cpu_s": [round(x, 3) for x in off],
            "on_cpu_s": [round(x, 3) for x in on],
            "ratio": round(statistics.median(on) / statistics.median(off), 2)}


#: The gettext names of the languages the phrase rules read (:mod:`toolvet.domain.findings.languages`).
LOCALES = ("es", "fr", "de", "pt", "pt_BR", "it", "ru", "zh_CN", "zh_TW", "ja", "ko")


def _messages(folder: Path, locale: str) -> list[tuple[str, str, str]]:
    """(catalog, English original, translation) of every non-empty translated message of ``locale``, each
    plural form one message (read with ``polib``, a dev dependency: the standard library's ``gettext``
    parses a catalog but offers no public way to list its messages)."""
    import polib

    out: list[tuple[str, str, str]] = []
    for path in sorted((folder / locale / "LC_MESSAGES").glob("*.mo")):
        try:
            catalog = polib.mofile(str(path))
        except (OSError, UnicodeDecodeError, ValueError):
            continue  # a catalog in another encoding, or broken: not this benchmark's concern
        for entry in catalog:
            forms = list(entry.msgstr_plural.values()) if entry.msgstr_plural else [entry.msgstr]
            out += [(path.stem, entry.msgid, text) for text in forms if entry.msgid and text.strip()]
    return out


def _raised(text: str) -> str | None:
    found = [f for f in static_findings({"name": "t", "description": text}) if f["severity"] != "info"]
    return f"{found[0]['code']}: {found[0].get('evidence', '')!r}" if found else None


def translations(folder: Path, show: int = 3) -> dict[str, Any]:
    """False alarms on translated messages (and their English originals, each once)."""
    rows: list[dict[str, Any]] = []
    originals: dict[str, str] = {}
    for locale in LOCALES:
        messages = _messages(folder, locale)
        alarms = []
        for catalog, original, text in messages:
            originals.setdefault(original, catalog)
            if (why := _raised(text)) is not None:
                alarms.append(f"{catalog}: {why} in {text[:100]!r}")
        rows.append({"locale": locale, "messages": len(messages), "flagged": len(alarms), "first": alarms[:show]})
    english = [f"{catalog}: {why}" for original, catalog in originals.items() if (why := _raised(original))]
    rows.append({"locale": "en (originals)", "messages": len(originals), "flagged": len(english),
                 "first": english[:show]})
    return {"folder": str(folder), "rows": rows}


def _docstrings() -> list[tuple[str, str]]:
    """(file, docstring) of every distinct docstring under the standard library and site-packages."""
    import ast
    import sysconfig

    roots = sorted({sysconfig.get_paths()[key] for key in ("stdlib", "purelib", "platlib")})
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for root in roots:
        for path in sorted(Path(root).rglob("*.py")):
            if any(part.startswith("test") for part in path.relative_to(root).parts[:-1]):
                continue
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"))
            except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
                continue  # not this benchmark's concern
            for node in ast.walk(tree):
                if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                    doc = ast.get_docstring(node)
                    if doc and doc not in seen:
                        seen.add(doc)
                        out.append((str(path), doc))
    return out


def docstrings(show: int = 5) -> dict[str, Any]:
    """False alarms on the docstrings of the standard library and the installed packages."""
    docs = _docstrings()
    codes: dict[str, int] = {}
    first: list[str] = []
    flagged = 0
    for path, doc in docs:
        found = {f["code"] for f in static_findings({"name": "doc_tool", "description": doc})
                 if f["severity"] != "info"}
        if not found:
            continue
        flagged += 1
        for code in found:
            codes[code] = codes.get(code, 0) + 1
        if len(first) < show:
            first.append(f"{Path(path).name}: {', '.join(sorted(found))} in {doc[:100]!r}")
    return {"docstrings": len(docs), "flagged": flagged, "codes": dict(sorted(codes.items())), "first": first}


def render(report: dict[str, Any]) -> str:
    q = report["quality"]
    lines = ["toolvet findings benchmark: corpus tests/corpus/ (flagged = a warning or high finding)", "",
             f"{'part':10} {'tp':>4} {'fn':>4} {'fp':>4} {'tn':>4} {'precision':>10} {'recall':>8} {'fpr':>7}"]
    for part in ("all", "tuning", "heldout", "fresh"):
        f = q[part]
        lines.append(f"{part:10} {f['tp']:>4} {f['fn']:>4} {f['fp']:>4} {f['tn']:>4} {f['precision']:>10.3f} "
                     f"{f['recall']:>8.3f} {f['fpr']:>7.3f}")
    lines += ["(all: the gated parts, tuning and held out; fresh: held-out batches written since, never tuned on, "
              "not gated)", "", f"{'part':8} {'category':22} {'label':9} {'n':>3} {'recall':>7} {'fpr':>6}"]
    for c in q["categories"]:
        figure = f"{c['recall']:>7.3f} {'-':>6}" if c["label"] == "malicious" else f"{'-':>7} {c['fpr']:>6.3f}"
        lines.append(f"{c['part']:8} {c['category']:22} {c['label']:9} {c['n']:>3} {figure}")
    lines += ["", "rewording batches (each written before the rules changed for it; docs/findings.md gives the "
              "figure of its one run before tuning):", f"{'batch':12} {'part':8} {'attacks':>8} {'caught':>7} "
              f"{'look-alikes':>12} {'flagged':>8}"]
    lines += [f"{b['batch']:12} {b['part']:8} {b['attacks']:>8} {b['caught']:>7} {b['look_alikes']:>12} "
              f"{b['flagged']:>8}" for b in q["batches"]]
    if q["wrong"]:
        lines += ["", "misclassified:"] + [f"  {w['id']} ({w['label']}): {', '.join(w['codes']) or '-'}"
                                           for w in q["wrong"]]
    lines += ["", "speed, one core (best of the repeats):",
              f"{'tools':24} {'n':>6} {'checks tools/s':>15} {'json.dumps tools/s':>19} "
              f"{'checks/json':>12} {'us/tool':>8}"]
    for r in report["speed"]:
        lines.append(f"{r['tools']:24} {r['n']:>6} {r['checks_tools_per_s']:>15,} {r['json_tools_per_s']:>19,} "
                     f"{r['checks_over_json']:>11.2f}x {r['checks_us_per_tool']:>8}")
    for key, names in (("writes", "the farm's names, each shared by a fleet of servers"),
                       ("writes_unique", "every server's names its own (nothing to compare across servers)")):
        writes = report.get(key)
        if writes:
            lines += ["", f"discovery writes, {writes['servers']} farm servers ({writes['tools']:,} new tools), "
                          f"{names}, CPU seconds per run, alternated:",
                      f"  findings off  {' '.join(f'{x:.3f}' for x in writes['off_cpu_s'])}",
                      f"  findings on   {' '.join(f'{x:.3f}' for x in writes['on_cpu_s'])}",
                      f"  on / off      {writes['ratio']:.2f}x (medians)"]
    if "translations" in report:
        t = report["translations"]
        lines += ["", f"false alarms on translated messages ({t['folder']}):",
                  f"{'locale':16} {'messages':>9} {'flagged':>8} {'rate':>8}"]
        for r in t["rows"]:
            rate = r["flagged"] / r["messages"] if r["messages"] else 0.0
            lines.append(f"{r['locale']:16} {r['messages']:>9,} {r['flagged']:>8} {rate:>8.5f}")
            lines += [f"    {first}" for first in r["first"]]
    if "docstrings" in report:
        d = report["docstrings"]
        lines += ["", f"false alarms on docstrings: {d['flagged']} of {d['docstrings']:,} flagged "
                  f"({', '.join(f'{code} {n}' for code, n in d['codes'].items()) or 'none'})"]
        lines += [f"    {first}" for first in d["first"]]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5, help="timed repeats (the best counts)")
    parser.add_argument("--farm", type=int, default=2000, help="farm tools timed (0: none)")
    parser.add_argument("--writes", type=int, default=0,
                        help="farm servers written with and without the findings (0: skip)")
    parser.add_argument("--translations", type=Path, default=None,
                        help="a gettext locale folder whose catalogs are read for false alarms")
    parser.add_argument("--docstrings", action="store_true",
                        help="read every docstring of the standard library and installed packages for false alarms")
    parser.add_argument("--json", dest="as_json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    entries = load()
    report: dict[str, Any] = {"quality": quality(entries, load("fresh")),
                              "speed": speed(entries, args.farm, args.repeat)}
    if args.writes > 0:
        report["writes"] = write_cost(args.writes, args.repeat)
        report["writes_unique"] = write_cost(args.writes, args.repeat, fleet=False)
    if args.translations is not None:
        report["translations"] = translations(args.translations)
    if args.docstrings:
        report["docstrings"] = docstrings()
    print(json.dumps(report, indent=2) if args.as_json else render(report))


if __name__ == "__main__":
    main()
