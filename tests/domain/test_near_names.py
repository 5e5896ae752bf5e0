"""The near-name index proposes the keys a copy check should be given: every key within one edit."""

from __future__ import annotations

import random

from toolvet.domain.findings import name_key
from toolvet.domain.findings.near_names import MAX_NEAR, MIN_LENGTH, PER_LIST, NearNames


def index(*names: str) -> NearNames:
    near = NearNames()
    for name in names:
        near.add(name_key(name))
    return near


def test_one_insertion_deletion_substitution_or_swap_away_is_near_both_ways():
    original = name_key("create_issue")
    for copy in ("create_isue", "create_issues", "create_lssue", "create_issu3", "craete_issue"):
        key = name_key(copy)
        assert original in index("create_issue").near(key), copy
        assert key in index(copy).near(original), copy


def test_two_edits_away_or_another_word_is_not_near():
    near = index("create_issue", "delete_issue", "list_issues", "create_isssuee")
    assert near.near(name_key("create_issue")) == []
    assert near.near(name_key("crate_isue")) == []


def test_an_answer_is_remembered_until_a_key_is_added():
    near = index("create_issue", "list_issues")
    key = name_key("create_isue")
    assert near.near(key) == [name_key("create_issue")]
    remembered = near.near(key)
    assert near.near(key) is remembered  # the same list while no key comes
    near.add(name_key("create_issue"))  # already filed: nothing changes
    assert near.near(key) is remembered and remembered == [name_key("create_issue")]
    near.add(name_key("creat_isue"))
    assert near.near(key) is not remembered
    assert near.near(key) == sorted([name_key("create_issue"), name_key("creat_isue")])


def test_a_key_is_not_near_itself_and_short_keys_have_no_neighbours():
    near = index("create_issue", "list", "lost", "get_x")
    assert near.near(name_key("create_issue")) == []
    assert near.near("list") == [] and near.near("last") == []
    assert all(len(k) < MIN_LENGTH for k in ("list", "lost"))


def test_a_crowd_of_near_keys_is_cut_to_the_first_few_in_order():
    near = index(*(f"tool_{c}x" for c in "abcdefghijklmnopqrstuvwxyz"))
    found = near.near(name_key("tool_x"))
    assert len(found) == MAX_NEAR and found == sorted(found)
    assert found[0] == "toolax"


def test_keys_added_later_are_found_by_later_lookups():
    near = index("create_issue", "list_files")
    original, unknown = name_key("create_issue"), name_key("create_issuex")
    assert near.near(original) == [] and near.near(unknown) == [original]
    for added in ("create_isue", "create_issues", "crate_issue", "Create-Issue", "list_file"):
        near.add(name_key(added))
    assert near.near(original) == ["crateissue", "createissues", "createisue"]
    assert near.near(unknown) == ["createissue", "createissues"]
    assert near.near(name_key("list_files")) == ["listfile"] and len(near) == 6


def test_a_long_list_is_read_for_its_earliest_keys_only():
    """Names that share one half fill one list; a lookup checks its PER_LIST earliest."""
    near = index(*(f"archive_alerts_{i:03d}" for i in range(100)))  # one list of 100 (same length and start)
    assert PER_LIST <= 16
    assert near.near(name_key("archive_alerts_00x")) == [f"archivealerts00{i}" for i in range(4)]
    assert near.near(name_key("archive_alerts_09x")) == []  # filed after the list's first 16


def test_every_key_within_one_edit_is_found_while_lists_are_short():
    """Against a scan of every key with the same distance: nothing within one edit is missed."""
    from rapidfuzz.distance import OSA

    rng = random.Random(7)
    keys = sorted({"".join(rng.choice("abcdefgh") for _ in range(rng.randint(5, 9))) for _ in range(400)})
    near = NearNames()
    for key in keys:
        near.add(key)
    for probe in keys[:200]:
        expected = sorted(k for k in keys if k != probe and OSA.distance(probe, k) <= 1)[:MAX_NEAR]
        assert near.near(probe) == expected, probe


def test_a_key_is_filed_once():
    near = index("create_issue")
    near.add(name_key("Create-Issue"))  # the same key
    assert len(near) == 1
    near.add(name_key("create_isue"))
    assert len(near) == 2 and "createisue" in near
