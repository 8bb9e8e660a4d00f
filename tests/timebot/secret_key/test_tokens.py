"""Signed reply / link tokens: round trip, tampering, expiry, case, and finding them in mail."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from timebot.secret_key.tokens import (
    ApprovalToken,
    PeriodHint,
    TokenExpired,
    TokenMalformed,
    TokenMissing,
    TokenTampered,
    find_token_candidates,
    make_token,
    message_id,
    period_hint,
    reply_address,
    resolve_reply_token,
    token_length,
    verify_token,
)

SECRET = "s3cret-key-for-tests"
EVENT = "65a1f0c2d4e5f60718293a4b"
APPROVER = "65A1F0C2D4E5F60718293A4C"  # upper case in, lower case out
HOUR = 3_600_000
NOW = 1_767_607_200_000  # 2026-01-05T10:00Z, a whole hour
DOMAIN = "timebot.localhost"


def token(purpose: str = "reply", expires: int = NOW + 72 * HOUR, stage: int = 2) -> str:
    return make_token(
        SECRET,
        purpose,  # type: ignore[arg-type]
        event_id=EVENT,
        approver_id=APPROVER,
        stage=stage,
        expires_at_ms=expires,
    )


def test_round_trip() -> None:
    value = verify_token(SECRET, "reply", token(), now_ms=NOW)
    assert value == ApprovalToken(EVENT, APPROVER.lower(), 2, NOW + 72 * HOUR)


@pytest.mark.parametrize("purpose", ["reply", "approve-link", "reject-link"])
def test_alphabet_and_length(purpose: str) -> None:
    text = token(purpose)
    assert len(text) == token_length(purpose)  # type: ignore[arg-type]
    assert set(text) <= set("abcdefghijklmnopqrstuvwxyz234567")


def test_reply_address_fits_a_local_part() -> None:
    local = reply_address(token(), DOMAIN).split("@")[0]
    assert local.startswith("approvals+")
    assert len(local) <= 64


def test_case_insensitive() -> None:
    assert verify_token(SECRET, "reply", token().upper(), now_ms=NOW).event_id == EVENT
    mixed = "".join(c.upper() if i % 2 else c for i, c in enumerate(token()))
    assert verify_token(SECRET, "reply", mixed, now_ms=NOW).stage == 2


def test_expiry_rounds_up_to_the_hour() -> None:
    value = verify_token(SECRET, "reply", token(expires=NOW + 1), now_ms=NOW)
    assert value.expires_at_ms == NOW + HOUR


def test_expired() -> None:
    text = token(expires=NOW)
    with pytest.raises(TokenExpired) as caught:
        verify_token(SECRET, "reply", text, now_ms=NOW)
    assert caught.value.token.event_id == EVENT
    assert verify_token(SECRET, "reply", text, now_ms=NOW - 1).stage == 2


def test_other_secret_or_purpose_is_tampered() -> None:
    with pytest.raises(TokenTampered):
        verify_token("another key", "reply", token(), now_ms=NOW)
    approve = token("approve-link")
    with pytest.raises(TokenTampered):
        verify_token(SECRET, "reject-link", approve, now_ms=NOW)
    with pytest.raises(TokenMalformed):  # a reply token is shorter than a link token
        verify_token(SECRET, "approve-link", token("reply"), now_ms=NOW)


def test_every_single_character_change_is_refused() -> None:
    original = token("approve-link")
    alphabet = "abcdefghijklmnopqrstuvwxyz234567"
    for index in range(len(original)):
        for replacement in alphabet[:6]:
            if replacement == original[index]:
                continue
            altered = original[:index] + replacement + original[index + 1 :]
            with pytest.raises((TokenTampered, TokenMalformed)):
                verify_token(SECRET, "approve-link", altered, now_ms=NOW)


def test_payload_swap_is_tampered() -> None:
    """Another approver's payload under this token's MAC does not verify."""
    mine = base64.b32decode(token().upper() + "===")
    other = make_token(
        SECRET, "reply", event_id=EVENT, approver_id="0" * 24, stage=2,
        expires_at_ms=NOW + 72 * HOUR,
    )
    theirs = base64.b32decode(other.upper() + "===")
    forged = base64.b32encode(theirs[:28] + mine[28:]).decode().rstrip("=").lower()
    with pytest.raises(TokenTampered):
        verify_token(SECRET, "reply", forged, now_ms=NOW)


@pytest.mark.parametrize("text", ["", "abc", "1" * 53, "a" * 52, token() + "a", "é" * 53])
def test_malformed(text: str) -> None:
    with pytest.raises(TokenMalformed):
        verify_token(SECRET, "reply", text, now_ms=NOW)


def test_non_canonical_last_character_is_malformed() -> None:
    text = token()
    # the last character carries one spare bit; setting it must not give a second spelling
    alphabet = "abcdefghijklmnopqrstuvwxyz234567"
    last = alphabet.index(text[-1])
    twin = text[:-1] + alphabet[last | 1 if not last & 1 else last & ~1]
    with pytest.raises((TokenMalformed, TokenTampered)):
        verify_token(SECRET, "reply", twin, now_ms=NOW)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        make_token(SECRET, "reply", event_id="xyz", approver_id=APPROVER, stage=1,
                   expires_at_ms=NOW)  # fmt: skip
    with pytest.raises(ValueError):
        make_token(SECRET, "reply", event_id=EVENT, approver_id=APPROVER, stage=256,
                   expires_at_ms=NOW)  # fmt: skip
    with pytest.raises(ValueError):
        make_token(SECRET, "nonsense", event_id=EVENT, approver_id=APPROVER,  # type: ignore[arg-type]
                   stage=1, expires_at_ms=NOW)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(
    event=st.binary(min_size=12, max_size=12),
    approver=st.binary(min_size=12, max_size=12),
    stage=st.integers(0, 255),
    hours=st.integers(1, 10_000_000),
)
def test_round_trip_property(event: bytes, approver: bytes, stage: int, hours: int) -> None:
    text = make_token(SECRET, "reply", event_id=event.hex(), approver_id=approver.hex(),
                      stage=stage, expires_at_ms=hours * HOUR)  # fmt: skip
    value = verify_token(SECRET, "reply", text.upper(), now_ms=hours * HOUR - 1)
    assert value == ApprovalToken(event.hex(), approver.hex(), stage, hours * HOUR)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=80))
def test_verify_never_crashes(text: str) -> None:
    with pytest.raises((TokenMalformed, TokenTampered, TokenExpired)):
        verify_token(SECRET, "reply", text, now_ms=NOW)


# --- finding the token in a message --------------------------------------------------------


def test_message_id_carries_the_token() -> None:
    text = token()
    mid = message_id(text, DOMAIN)
    assert mid.startswith(f"<{text}.") and mid.endswith(f"@{DOMAIN}>")
    assert message_id(text, DOMAIN) != mid  # a fresh nonce each time


def test_find_in_to_lowercased_by_an_mta() -> None:
    text = token()
    headers = [("To", f"Timebot <{reply_address(text, DOMAIN).lower()}>")]
    assert find_token_candidates(headers, DOMAIN) == [text]
    value = resolve_reply_token(headers, secret_key=SECRET, mail_domain="TimeBot.Localhost",
                                now_ms=NOW)  # fmt: skip
    assert value.approver_id == APPROVER.lower()


def test_priority_order() -> None:
    good = token()
    other = token(stage=3)
    thread = token(stage=4)
    headers = [
        ("References", f"<x@elsewhere> <{thread}.abc@{DOMAIN}>"),
        ("X-Original-To", reply_address(other, DOMAIN)),
        ("Delivered-To", reply_address(other, DOMAIN)),
        ("Cc", f"someone@example.com, {reply_address(good, DOMAIN).upper()}"),
        ("To", "anna@example.com"),
    ]
    assert find_token_candidates(headers, DOMAIN) == [good, other, thread]


def test_other_domains_do_not_count() -> None:
    text = token()
    headers = [
        ("To", f"approvals+{text}@evil.example"),
        ("In-Reply-To", f"<{text}.nonce@evil.example>"),
    ]
    assert find_token_candidates(headers, DOMAIN) == []
    with pytest.raises(TokenMissing):
        resolve_reply_token(headers, secret_key=SECRET, mail_domain=DOMAIN, now_ms=NOW)


def test_thread_headers_when_the_reply_address_was_dropped() -> None:
    text = token()
    headers = [
        ("To", "timebot@timebot.localhost"),
        ("References", f"<{token(stage=9)}.aaa@{DOMAIN}> <{text}.bbb@{DOMAIN}>"),
        ("In-Reply-To", f"<{text}.bbb@{DOMAIN}>"),
    ]
    assert resolve_reply_token(headers, secret_key=SECRET, mail_domain=DOMAIN,
                               now_ms=NOW).stage == 2  # fmt: skip


def test_first_valid_candidate_wins_and_errors_are_typed() -> None:
    expired = token(expires=NOW - HOUR)
    good = token()
    headers = [("To", reply_address("garbage", DOMAIN)), ("Cc", reply_address(good, DOMAIN))]
    assert resolve_reply_token(headers, secret_key=SECRET, mail_domain=DOMAIN,
                               now_ms=NOW).stage == 2  # fmt: skip
    with pytest.raises(TokenExpired):
        resolve_reply_token([("To", reply_address(expired, DOMAIN))], secret_key=SECRET,
                            mail_domain=DOMAIN, now_ms=NOW)  # fmt: skip
    with pytest.raises(TokenMalformed):
        resolve_reply_token([("To", reply_address("garbage", DOMAIN))], secret_key=SECRET,
                            mail_domain=DOMAIN, now_ms=NOW)  # fmt: skip


# --- the period hint in our Message-IDs -----------------------------------------------------

_OWNER = "0123456789abcdef01234567"


def test_a_hint_rides_in_the_message_id_and_is_read_back() -> None:
    hint = PeriodHint(_OWNER, 1_772_409_600_000, 1_773_014_400_000)
    mid = message_id("tok3n", "example.com", nonce="n0nce", hint=hint)
    assert mid == f"<tok3n.n0nce.{hint.text()}@example.com>"
    assert find_token_candidates([("In-Reply-To", mid)], "example.com") == ["tok3n"]
    assert period_hint([("In-Reply-To", mid)], "TOK3N", "Example.COM.") == hint
    refs = f"<other@example.org> {mid} <tok3n.n0nce@example.com>"
    assert period_hint([("References", refs)], "tok3n", "example.com") == hint


@pytest.mark.parametrize("headers", [
    [],
    [("In-Reply-To", "<tok3n.n0nce@example.com>")],  # no hint (an older mail of ours)
    [("In-Reply-To", f"<other.n0nce.p{_OWNER}-1-2@example.com>")],  # another token's
    [("In-Reply-To", f"<tok3n.n0nce.p{_OWNER}-1-2@example.org>")],  # not our domain
    [("In-Reply-To", "<tok3n.n0nce.pXYZ-1-2@example.com>")],
    [("In-Reply-To", f"<tok3n.n0nce.p{_OWNER}-{'z' * 13}-2@example.com>")],  # too long
    [("In-Reply-To", f"<tok3n.n0nce.p{_OWNER}--2@example.com>")],
    [("In-Reply-To", f"<tok3n.n0nce.p{_OWNER}-1-2.x@example.com>")],
    [("Subject", f"<tok3n.n0nce.p{_OWNER}-1-2@example.com>")],  # not a threading header
])
def test_no_hint_is_read_from_anything_else(headers: list[tuple[str, str]]) -> None:
    assert period_hint(headers, "tok3n", "example.com") is None


def test_a_hint_that_would_not_read_back_is_left_out() -> None:
    for hint in (PeriodHint("not-an-id", 1, 2), PeriodHint(_OWNER, -1, 2)):
        assert message_id("tok3n", "example.com", nonce="n", hint=hint) == \
            "<tok3n.n@example.com>"


@settings(max_examples=200)
@given(st.text(max_size=300))
def test_any_header_value_reads_as_a_hint_or_none(value: str) -> None:
    found = period_hint([("References", value)], "tok3n", "example.com")
    assert found is None or (len(found.person_id) == 24 and found.start_ms >= 0)
