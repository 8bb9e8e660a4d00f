"""Which senders and recipients we accept, decided cheaply at MAIL and RCPT time.

An envelope sender is refused (553) when no address has what it holds: control characters
(NUL…), bytes that are not UTF-8, more than MAX_SENDER_CHARS characters. Accepting it would
only fail at the commit, and the sender's server would be told to try again for days.

`approvals+<token>@<mail domain>`: a reply to a review request or reminder (the token must be
well formed and correctly signed; an expired one is still accepted so that the sender gets a
receipt saying so). `time@<mail domain>`: quick time entry. Anything else: 550 5.1.1.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from timebot.inbound_text import has_control
from timebot.secret_key.tokens import (
    REPLY_LOCAL_PREFIX,
    REPLY_PURPOSES,
    TokenExpired,
    TokenMalformed,
    TokenTampered,
    verify_token,
)

TokenCheck = Callable[[str], bool]
"""Is the token ours (well formed, signed with our key)? Expiry does not matter at RCPT time."""


class RecipientKind(Enum):
    APPROVAL_REPLY = "approval-reply"
    TIME_ENTRY = "time-entry"


@dataclass(frozen=True)
class Recipient:
    kind: RecipientKind
    address: str
    token: str | None = None


@dataclass(frozen=True)
class Refusal:
    reason: str


MAX_SENDER_CHARS = 320  # a local part of 64 and a domain of 255, and the @


def sender_problem(address: str) -> str | None:
    """What is wrong with an envelope sender (None: nothing; the null sender <> is fine)."""
    if len(address) > MAX_SENDER_CHARS:
        return f"is longer than {MAX_SENDER_CHARS} characters"
    try:
        address.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes, kept by the SMTP server as surrogates
        return "is not valid UTF-8"
    if has_control(address):
        return "contains a control character"
    return None


def split_address(address: str) -> tuple[str, str] | None:
    cleaned = address.strip().strip("<>").strip()
    local, at, domain = cleaned.rpartition("@")
    if not at or not local or not domain:
        return None
    return local, domain.lower().rstrip(".")


def classify_recipient(
    address: str, mail_domain: str, token_is_genuine: TokenCheck
) -> Recipient | Refusal:
    parts = split_address(address)
    if parts is None:
        return Refusal("malformed address")
    local, domain = parts
    if domain != mail_domain.lower():
        return Refusal(f"we do not accept mail for {domain}")
    lowered = local.lower()
    if lowered == "time":
        return Recipient(RecipientKind.TIME_ENTRY, address)
    if lowered.startswith(REPLY_LOCAL_PREFIX):
        token = lowered[len(REPLY_LOCAL_PREFIX):]
        if not token_is_genuine(token):
            return Refusal("unknown or malformed reply address")
        return Recipient(RecipientKind.APPROVAL_REPLY, address, token)
    return Refusal("no such mailbox")


def reply_token_check(secret_key: str, now_ms: Callable[[], int]) -> TokenCheck:
    def is_genuine(token: str) -> bool:
        for purpose in REPLY_PURPOSES:  # a review's reply address, or a digest's
            try:
                verify_token(secret_key, purpose, token, now_ms=now_ms())
            except TokenExpired:
                return True
            except (TokenMalformed, TokenTampered):
                continue
            return True
        return False

    return is_genuine
