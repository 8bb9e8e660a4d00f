"""Signed, expiring tokens for reply addresses, our Message-IDs and one-click links.

A token names a timesheet's submit event (24 hex), the approver (a person id, 24 hex), the
approval stage (0..255) and an expiry. It is HMAC-SHA256 signed under a key derived from
TIMEBOT_SECRET_KEY *per purpose* ("reply", "approve-link", "reject-link"): a reply token is
no approve link and the reverse.

Layout (bytes): stage (1) | event id (12) | approver id (12) | expiry (3) | MAC (n), written in
lowercase RFC 4648 base32 without padding (`a-z2-7`). Base32 because some MTAs lower-case
local parts: the token reads the same whatever the case. The expiry is counted in whole hours
since the Unix epoch (rounded up, so a token lives at most an hour longer than asked; good
until the year 3884).

MAC length per purpose:
- "reply": 5 bytes (40 bits), so that `approvals+<token>` stays within the 64 octets RFC 5321
  allows for a local part (53 + 10 = 63). A reply is only applied when its sender is also
  authenticated as the approver (mail.inbound.sender_auth), so the token is not the only gate.
- "digest-reply": the same, for the Reply-To of a daily digest; its "event id" is the digest's
  id (timebot.state.digests: the items it listed, in order) and its stage is 0.
- links: 12 bytes (96 bits), 64 characters; a link is a bearer credential. ("submit-link" and
  "prefs-link" are web.links' Submit now and notification-preference links: their "event
  id" packs the period (`pack_period`), resp. names the organisation.)

Our Message-IDs carry the reply token too, `<token.nonce@mail domain>`, so a reply whose client
dropped the Reply-To address can still be matched through In-Reply-To / References.

Times are Unix milliseconds, as everywhere in timebot. Errors: TokenError (its subclasses say
why a token was refused) and TokenMissing, below timebot.errors.TimebotError.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from email.utils import getaddresses
from typing import Literal

from timebot.errors import TimebotError

Purpose = Literal[
    "reply", "digest-reply", "approve-link", "reject-link", "submit-link", "prefs-link"
]
PURPOSES: tuple[Purpose, ...] = (
    "reply", "digest-reply", "approve-link", "reject-link", "submit-link", "prefs-link"
)
REPLY_PURPOSES: tuple[Purpose, ...] = ("reply", "digest-reply")

REPLY_LOCAL_PREFIX = "approvals+"
_MAC_BYTES: dict[str, int] = {
    "reply": 5, "digest-reply": 5, "approve-link": 12, "reject-link": 12, "submit-link": 12,
    "prefs-link": 12,
}
_PAYLOAD_BYTES = 1 + 12 + 12 + 3
_HOUR_MS = 3_600_000
_MAX_HOURS = (1 << 24) - 1
_HEX24 = re.compile(r"[0-9a-fA-F]{24}\Z")
_TOKEN_CHARS = re.compile(r"[a-z2-7]+\Z")


@dataclass(frozen=True)
class ApprovalToken:
    """What a genuine token says."""

    event_id: str  # the timesheet's submit event, 24 lowercase hex
    approver_id: str  # the approver's person id, 24 lowercase hex
    stage: int
    expires_at_ms: int  # Unix ms (a whole hour)


class TokenError(TimebotError):
    """A token was refused; the subclass says why."""


class TokenMalformed(TokenError):
    """Not a token of ours at all (wrong length, alphabet or fields)."""


class TokenTampered(TokenError):
    """Well formed, but the signature does not match (altered, forged, another purpose, or
    another secret key)."""


class TokenExpired(TokenError):
    """Genuine, but past its expiry; `.token` holds what it says."""

    def __init__(self, message: str, token: ApprovalToken) -> None:
        super().__init__(message)
        self.token = token


class TokenMissing(TimebotError):
    """A message carries no token of ours anywhere."""


def _key(secret_key: str, purpose: str) -> bytes:
    if purpose not in _MAC_BYTES:
        raise ValueError(f"unknown token purpose {purpose!r}")
    return hmac.new(
        secret_key.encode("utf-8"), b"timebot-token-v1/" + purpose.encode("ascii"), hashlib.sha256
    ).digest()


def _mac(secret_key: str, purpose: str, payload: bytes) -> bytes:
    return hmac.new(_key(secret_key, purpose), payload, hashlib.sha256).digest()[
        : _MAC_BYTES[purpose]
    ]


def _b32(data: bytes) -> str:
    return base64.b32encode(data).decode("ascii").rstrip("=").lower()


def token_length(purpose: Purpose) -> int:
    """Characters of a token of this purpose."""
    return len(_b32(bytes(_PAYLOAD_BYTES + _MAC_BYTES[purpose])))


def make_token(
    secret_key: str,
    purpose: Purpose,
    *,
    event_id: str,
    approver_id: str,
    stage: int,
    expires_at_ms: int,
) -> str:
    """A token for `purpose`; raises ValueError on ids that are not 24 hex or a bad stage."""
    for name, value in (("event_id", event_id), ("approver_id", approver_id)):
        if not _HEX24.match(value):
            raise ValueError(f"{name} must be 24 hex digits, not {value!r}")
    if not 0 <= stage <= 255:
        raise ValueError(f"stage must be within 0..255, not {stage}")
    hours = -(-expires_at_ms // _HOUR_MS)
    if not 0 < hours <= _MAX_HOURS:
        raise ValueError(f"expiry out of range: {expires_at_ms}")
    payload = (
        bytes([stage])
        + bytes.fromhex(event_id)
        + bytes.fromhex(approver_id)
        + hours.to_bytes(3, "big")
    )
    return _b32(payload + _mac(secret_key, purpose, payload))


def verify_token(secret_key: str, purpose: Purpose, token: str, *, now_ms: int) -> ApprovalToken:
    """The token's content, or raise TokenMalformed / TokenTampered / TokenExpired.

    Case does not matter (an MTA may have changed it)."""
    text = token.strip().lower()
    expected_length = token_length(purpose)
    if len(text) != expected_length or not _TOKEN_CHARS.match(text):
        raise TokenMalformed(f"not a {purpose} token (length or alphabet)")
    try:
        raw = base64.b32decode(text.upper() + "=" * (-len(text) % 8))
    except (binascii.Error, ValueError) as error:
        raise TokenMalformed(f"not a {purpose} token (base32)") from error
    if _b32(raw) != text:  # the spare bits of the last character must be zero
        raise TokenMalformed(f"not a {purpose} token (non-canonical encoding)")
    payload, mac = raw[:_PAYLOAD_BYTES], raw[_PAYLOAD_BYTES:]
    if not hmac.compare_digest(mac, _mac(secret_key, purpose, payload)):
        raise TokenTampered(f"the {purpose} token's signature does not match")
    content = ApprovalToken(
        event_id=payload[1:13].hex(),
        approver_id=payload[13:25].hex(),
        stage=payload[0],
        expires_at_ms=int.from_bytes(payload[25:28], "big") * _HOUR_MS,
    )
    if now_ms >= content.expires_at_ms:
        raise TokenExpired(f"the {purpose} token expired", content)
    return content


# --- reply addresses and Message-IDs -------------------------------------------------------


def reply_address(token: str, mail_domain: str) -> str:
    """`approvals+<token>@<mail domain>`, for Reply-To."""
    return f"{REPLY_LOCAL_PREFIX}{token}@{mail_domain}"


@dataclass(frozen=True)
class PeriodHint:
    """The reviewed timesheet's owner and period, carried after the token in the Message-ID of
    a mail about it. Never trusted: a reply reads the approval state of this period with the
    token's event only when the event it reads has this very owner and period."""

    person_id: str
    start_ms: int
    end_ms: int

    def text(self) -> str:
        return f"p{self.person_id}-{_base36(self.start_ms)}-{_base36(self.end_ms)}"


_HINT = re.compile(r"p([0-9a-f]{24})-([0-9a-z]{1,12})-([0-9a-z]{1,12})")


def _base36(value: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    text = ""
    while True:
        value, digit = divmod(value, 36)
        text = digits[digit] + text
        if not value:
            return text


def message_id(token: str, mail_domain: str, nonce: str | None = None,
               hint: PeriodHint | None = None) -> str:
    """A Message-ID of ours carrying the token: `<token.nonce@mail domain>`, or with a hint
    `<token.nonce.hint@mail domain>`."""
    if nonce is None:
        nonce = _b32(secrets.token_bytes(10))
    tail = ""
    if hint is not None and min(hint.start_ms, hint.end_ms) >= 0:
        text = hint.text()
        # (another service's ids may have another shape: then there is no hint)
        tail = f".{text}" if _HINT.fullmatch(text) else ""
    return f"<{token}.{nonce}{tail}@{mail_domain}>"


def period_hint(headers: Iterable[tuple[str, str]], token: str, mail_domain: str
                ) -> PeriodHint | None:
    """The hint of our Message-ID that carries `token` in In-Reply-To or References (the
    direct parent first), or None."""
    wanted = token.lower()
    for local in _our_message_ids(list(headers), mail_domain.strip().lower().rstrip(".")):
        parts = local.lower().split(".")
        if len(parts) != 3 or parts[0] != wanted:
            continue
        found = _HINT.fullmatch(parts[2])
        if found is not None:
            return PeriodHint(found.group(1), int(found.group(2), 36), int(found.group(3), 36))
    return None


_ADDRESS_HEADERS = ("to", "cc", "delivered-to", "x-original-to")
_THREAD_HEADERS = ("in-reply-to", "references")
_MSGID = re.compile(r"<([^<>@\s]+)@([^<>\s]+)>")


def find_token_candidates(headers: Iterable[tuple[str, str]], mail_domain: str) -> list[str]:
    """Reply tokens a message carries, most trustworthy first, without duplicates.

    Order: reply addresses in To, Cc, Delivered-To, X-Original-To (each in header order); then
    our Message-IDs in In-Reply-To (the direct parent) and References (newest first). Anything
    shaped like `approvals+<x>@<mail domain>` counts as a candidate, so that a damaged token is
    reported as malformed rather than missing."""
    domain = mail_domain.strip().lower().rstrip(".")
    items = [(name.lower(), value) for name, value in headers]
    found: list[str] = []

    def add(candidate: str) -> None:
        candidate = candidate.lower()
        if candidate and candidate not in found:
            found.append(candidate)

    for header in _ADDRESS_HEADERS:
        for name, value in items:
            if name != header:
                continue
            try:
                pairs = getaddresses([value])
            except Exception:  # a broken header just yields nothing
                pairs = []
            for _display, address in pairs:
                local, at, addr_domain = address.rpartition("@")
                if not at or addr_domain.lower().rstrip(".") != domain:
                    continue
                if local.lower().startswith(REPLY_LOCAL_PREFIX):
                    add(local[len(REPLY_LOCAL_PREFIX) :].strip('"'))
    for local in _our_message_ids(items, domain):
        if "." in local:
            add(local.split(".", 1)[0])
    return found


def _our_message_ids(headers: list[tuple[str, str]], domain: str) -> Iterator[str]:
    """The local parts of the Message-IDs in our domain that In-Reply-To (the direct parent),
    then References (newest first) name."""
    for header in _THREAD_HEADERS:
        for name, value in headers:
            if name.lower() != header:
                continue
            for local, id_domain in reversed(_MSGID.findall(value)):
                if id_domain.lower().rstrip(".") == domain:
                    yield local


def resolve_reply_token(
    headers: Iterable[tuple[str, str]], *, secret_key: str, mail_domain: str, now_ms: int
) -> ApprovalToken:
    """The first candidate (in `find_token_candidates` order) that verifies as a reply token.

    None verifies: raise the first candidate's error (TokenMalformed / TokenTampered /
    TokenExpired); no candidate at all: TokenMissing."""
    first_error: TokenError | None = None
    for candidate in find_token_candidates(headers, mail_domain):
        try:
            return verify_token(secret_key, "reply", candidate, now_ms=now_ms)
        except TokenError as error:
            first_error = first_error or error
    if first_error is not None:
        raise first_error
    raise TokenMissing("the message carries no reply token of ours")


def pack_period(start_ms: int, end_ms: int) -> str:
    """A period as the 24 hex digits a token's "event id" holds: start (ms, 8 bytes) and
    length (minutes, 4 bytes)."""
    minutes = (end_ms - start_ms) // 60_000
    if start_ms < 0 or not 0 < minutes < 1 << 32:
        raise ValueError("period out of range")
    return f"{start_ms:016x}{minutes:08x}"


def unpack_period(packed: str) -> tuple[int, int]:
    start = int(packed[:16], 16)
    return start, start + int(packed[16:], 16) * 60_000
