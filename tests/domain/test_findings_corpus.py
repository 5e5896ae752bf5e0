"""The gate: on the labelled corpus (tests/corpus/), recall >= 0.90 and false-positive rate <= 0.05, a tool
counting as flagged when it has a ``warning`` or ``high`` finding. bench/findings.py prints the figures per
category and for the held-out part."""

from __future__ import annotations

from collections import Counter

from tests.corpus import load, score

RECALL_AT_LEAST = 0.90
FPR_AT_MOST = 0.05


def test_the_corpus_is_big_and_hard_enough():
    entries = load()
    benign = [e for e in entries if not e.malicious]
    assert len(entries) >= 200
    assert len(benign) >= 80
    assert sum(e.hard for e in benign) >= 40
    assert {e.part for e in entries} == {"tuning", "heldout"}
    assert len({e.id for e in entries}) == len(entries)
    assert all(e.label in ("malicious", "benign") and e.category and e.reason for e in entries)
    assert Counter(e.label for e in load("heldout"))["benign"] >= 10


def test_recall_and_false_positive_rate_meet_the_gate_on_the_whole_corpus():
    result = score(load())
    assert result.recall >= RECALL_AT_LEAST, result
    assert result.fpr <= FPR_AT_MOST, result


def test_the_fresh_batches_are_corpus_entries_apart_from_the_gated_parts():
    # Held-out batches written since (tests/corpus/__init__.py): the same shape of entry, ids of their own,
    # read by bench/findings.py on their own line and not by the gate above.
    fresh = load("fresh")
    assert fresh and all(e.part == "fresh" for e in fresh)
    assert all(e.label in ("malicious", "benign") and e.category and e.reason for e in fresh)
    assert not {e.id for e in fresh} & {e.id for e in load()}
    assert len({e.id for e in fresh}) == len(fresh)
