"""Errors of the mail package (and of the signed tokens in `timebot.tokens` it relies on).

Hierarchy::

    MailError                         base of everything raised by `mail.*` and `timebot.tokens`
    ├── TokenError                    a reply token / one-click link token is not acceptable
    │   ├── TokenMalformed            not a token of ours at all (wrong length, alphabet, fields)
    │   ├── TokenTampered             well formed, but the signature does not match (altered,
    │   │                             forged, another purpose, or another secret key)
    │   └── TokenExpired              genuine, but past its expiry (`.token` holds the payload)
    ├── TokenMissing                  a message carries no token of ours anywhere
    └── DkimKeyFileError              the TIMEBOT_DKIM_TXT_FILE cannot be read or parsed

What is *not* an exception here, on purpose: reading a message (`mail.reading.read_message`
never raises on bad input, it reads what it can), a decision (`mail.decide.decide` always
returns a Decision), a sender check (`mail.sender_auth` returns a verdict with its reason) and
the loop guard (`mail.loop_guard` returns why not, or None). Those are answers, not failures.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from timebot.tokens import ApprovalToken


class MailError(Exception):
    """Base of the mail package's exceptions."""


class TokenError(MailError):
    """A token was refused; the subclass says why."""


class TokenMalformed(TokenError):
    pass


class TokenTampered(TokenError):
    pass


class TokenExpired(TokenError):
    def __init__(self, message: str, token: ApprovalToken) -> None:
        super().__init__(message)
        self.token = token


class TokenMissing(MailError):
    pass


class DkimKeyFileError(MailError):
    pass
