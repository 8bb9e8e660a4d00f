"""A signed state reads back only as issued: by this key, for this purpose, before its expiry;
a state altered, expired, of another purpose or another key is refused."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bot.teams.consent import ConsentState
from tests.support import TEST_SECRET_KEY
from timebot.secret_key.signed_state import SignedState

NOW = 1_800_000_000
FIELDS = {"o": "org-1", "p": "person-1"}


def states(purpose: str = "teams-consent", key: str = TEST_SECRET_KEY) -> SignedState:
    return SignedState(key, purpose, seconds=600)


def test_a_state_reads_back_its_fields_until_it_expires() -> None:
    state = states().issue(FIELDS, NOW)
    assert states().read(state, NOW) == FIELDS
    assert states().read(state, NOW + 600) == FIELDS
    assert states().read(state, NOW + 601) is None


def test_a_state_of_another_purpose_or_key_is_refused() -> None:
    state = states().issue(FIELDS, NOW)
    assert states("slack-install").read(state, NOW) is None
    assert states(key=TEST_SECRET_KEY + "x").read(state, NOW) is None


@pytest.mark.parametrize("tamper", [
    lambda state: state.replace(".", "x.", 1),  # the body changed
    lambda state: state[:-1] + ("0" if state[-1] != "0" else "1"),  # the signature changed
    lambda state: state.split(".")[0],  # no signature
    lambda state: "eyJvIjoiYSJ9." + state.split(".")[1],  # another body under its signature
])
def test_a_tampered_state_is_refused(tamper: Callable[[str], str]) -> None:
    state = states().issue(FIELDS, NOW)
    assert states().read(tamper(state), NOW) is None


@pytest.mark.parametrize("garbage", ["", ".", "a.b.c", "\U0001f642.\u202e", "x" * 5000, "%00"])
def test_garbage_is_refused(garbage: str) -> None:
    assert states().read(garbage, NOW) is None


def test_the_expiry_is_no_field() -> None:
    with pytest.raises(ValueError):
        states().issue({"e": "1"}, NOW)


def test_the_teams_consent_state_keeps_its_wire_format() -> None:
    """A state issued before the helper (in flight across a deploy) still reads."""
    issued = ("eyJvIjoib3JnLTEiLCJwIjoicGVyc29uLTEiLCJlIjoxODAwMDAwNjAwfQ."
              "d1e6b2108c8a0b82873c4122398415d901af27450503e43154cc17e177b6b262")
    consent = ConsentState(TEST_SECRET_KEY)
    assert consent.issue("org-1", "person-1", NOW) == issued
    assert consent.read(issued, NOW) == ("org-1", "person-1")
