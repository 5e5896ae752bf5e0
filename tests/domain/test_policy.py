import pytest

from toolvet.domain.policy import ReviewState, is_available, offered, review_state


@pytest.mark.parametrize(("tool", "server", "expected"),
                         [(True, True, True), (True, False, False), (False, True, False), (False, False, False)])
def test_a_tool_is_available_only_when_it_and_its_server_are_enabled(tool, server, expected):
    assert is_available(tool, server) is expected


def test_review_state_follows_the_reviewed_fingerprint():
    assert review_state(None, "sha256:a") is ReviewState.UNREVIEWED
    assert review_state("sha256:a", "sha256:a") is ReviewState.REVIEWED
    assert review_state("sha256:a", "sha256:b") is ReviewState.CHANGED


@pytest.mark.parametrize(("available", "state", "hold", "expected"), [
    (True, ReviewState.UNREVIEWED, True, True),
    (True, ReviewState.REVIEWED, True, True),
    (True, ReviewState.CHANGED, True, False),
    (True, ReviewState.CHANGED, False, True),
    (False, ReviewState.REVIEWED, True, False),
    (False, ReviewState.CHANGED, False, False),
])
def test_a_changed_tool_is_held_only_under_hold_changed_tools(available, state, hold, expected):
    assert offered(available, state, hold) is expected
