"""Errors of the mail package.

Hierarchy::

    MailError                         base of everything raised by `mail.*`
    └── DkimKeyFileError              the TIMEBOT_DKIM_TXT_FILE cannot be read or parsed

The reply and link tokens' errors (TokenError and its subclasses, TokenMissing) are timebot's:
they live in `timebot.secret_key.tokens`, with the code that raises them.

What is *not* an exception here, on purpose: reading a message (`mail.reading.message.read_message`
never raises on bad input, it reads what it can), a decision (`mail.reading.decide.decide` always
returns a Decision), a sender check (`mail.inbound.sender_auth` returns a verdict with its reason)
and the loop guard (`mail.inbound.loop_guard` returns why not, or None). Those are answers, not
failures.
"""

from __future__ import annotations


class MailError(Exception):
    """Base of the mail package's exceptions."""


class DkimKeyFileError(MailError):
    pass
