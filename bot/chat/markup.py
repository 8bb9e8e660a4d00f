"""How a neutral text marks what it takes from outside, and times.

The neutral texts (bot.chat) are written in the chat markup timebot's catalogs already hold:
`*bold*` around a name or a period, everything else as typed. What enters a text from outside
timebot's own words (a name, a comment, the service's message) goes through
`markup.escape`, and a moment a reader should see in their own time zone through
`markup.time`: each platform's adapter gives its `Markup` (Slack's: mrkdwn escaping and
`<!date^…>`, bot.slack.render.SLACK). A Teams adapter gives its own (Adaptive Card text is
Markdown: it escapes Markdown's specials and turns `*bold*` into `**bold**` when rendering).

`PLAIN` is the markup of a reader who sees text as typed (unit tests, logs): no escape, the
moment in UTC in the language in force.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

from timebot import l10n


class Markup(Protocol):
    """A platform's way to show outside text as typed and a moment in the reader's zone."""

    def escape(self, text: Any) -> str:
        """`text` as the reader should see it typed (no link, mention, formatting)."""
        ...

    def time(self, ms: int) -> str:
        """The moment `ms` (epoch milliseconds) as the reader sees it."""
        ...


class PlainMarkup:
    """Text as typed; a moment as its date and time in UTC, in the language in force."""

    def escape(self, text: Any) -> str:
        return str(text)

    def time(self, ms: int) -> str:
        return l10n.format_datetime(ms, replace(l10n.current(), time_zone="UTC"))


PLAIN = PlainMarkup()
