"""Fingerprint micro-benchmark: toolvet's ``fingerprint`` and ``read_claim`` against their plain forms.

In one run, over the discovery farm's tool definitions (``bench/farm.py``, decoded from JSON as a
listing is), interleaved so every figure sees the same machine:

1. ``fingerprint(definition)`` against the reference it must equal: ``rfc8785.dumps`` of the contract
   and SHA-256 (no fast path);
2. the whole-definition digest (``definition_digest_and_size``) against ``json.dumps(sort_keys=True)``
   and SHA-256;
3. ``read_claim`` (digest, size, fingerprint, schema checks) per definition, beside the reference
   fingerprint's cost, which is what every new tool would pay without the fast path.

It checks that every fingerprint and digest equals the reference's before timing anything, prints
microseconds per definition and the ratios (lower is faster), and exits 0 whether or not the fast
path is faster; non-zero only when a result differs from the reference.

Run: ``python bench/fingerprint.py [--definitions 2000] [--rounds 15] [--json]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import rfc8785

sys.path.insert(0, str(Path(__file__).parent))
from farm import tool_definition
from toolvet.domain.definitions import read_claim
from toolvet.domain.fingerprint import CONTRACT_MEMBERS, definition_digest_and_size, fingerprint


def reference_fingerprint(definition: dict[str, Any]) -> str:
    contract = {key: definition.get(key) for key in CONTRACT_MEMBERS}
    return "sha256:" + hashlib.sha256(rfc8785.dumps(contract)).hexdigest()


def reference_digest(definition: dict[str, Any]) -> tuple[str, int]:
    data = json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode()
    return "sha256:" + hashlib.sha256(data).hexdigest(), len(data)


def per_definition_us(work: Callable[[dict[str, Any]], object], definitions: list[dict[str, Any]]) -> float:
    started = time.perf_counter()
    for definition in definitions:
        work(definition)
    return (time.perf_counter() - started) / len(definitions) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--definitions", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()

    definitions = [json.loads(json.dumps(tool_definition(i // 50, i % 50))) for i in range(args.definitions)]
    for definition in definitions:
        if (fingerprint(definition) != reference_fingerprint(definition)
                or definition_digest_and_size(definition) != reference_digest(definition)):
            print(f"result differs from the reference for {definition['name']}", file=sys.stderr)
            return 1

    cases: dict[str, Callable[[dict[str, Any]], object]] = {
        "fingerprint": fingerprint,
        "rfc8785 + sha256": reference_fingerprint,
        "digest and size": definition_digest_and_size,
        "json.dumps + sha256": reference_digest,
        "read_claim": lambda d: read_claim(d, 1 << 20),
    }
    figures: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.rounds):
        for name, work in cases.items():
            figures[name].append(per_definition_us(work, definitions))
    medians = {name: statistics.median(values) for name, values in figures.items()}
    result = {
        "definitions": args.definitions,
        "rounds": args.rounds,
        "us_per_definition": {name: round(value, 2) for name, value in medians.items()},
        "fingerprint_vs_rfc8785": round(medians["fingerprint"] / medians["rfc8785 + sha256"], 3),
        "digest_vs_json_dumps": round(medians["digest and size"] / medians["json.dumps + sha256"], 3),
        "read_claim_vs_rfc8785": round(medians["read_claim"] / medians["rfc8785 + sha256"], 3),
    }
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{args.definitions} farm definitions, median of {args.rounds} interleaved rounds")
    for name, value in medians.items():
        print(f"  {name:22s} {value:8.2f} us/definition")
    print(f"fingerprint / (rfc8785 + sha256):  {result['fingerprint_vs_rfc8785']:.3f}x")
    print(f"digest / (json.dumps + sha256):    {result['digest_vs_json_dumps']:.3f}x")
    print(f"read_claim / (rfc8785 + sha256):   {result['read_claim_vs_rfc8785']:.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
