"""Signed reply / link tokens: round trip, tampering, expiry, case, and finding them in mail."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from timebot.tokens import (
    ApprovalToken,
    TokenExpired,
    TokenMalformed,
    TokenMissing,
    TokenTampered,
    find_token_candidates,
    make_token,
    message_id,
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
