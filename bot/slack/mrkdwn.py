"""The one escape for text that enters Slack's mrkdwn from outside timebot's own words.

Slack parses `<…>` in mrkdwn (and in a message's top-level `text`) as links and mentions:
a person named `<!channel>` would notify everyone in a channel, a comment
`<https://evil|click>` would show a link with any label. Slack's rule: `&`, `<` and `>` are
written `&amp;`, `&lt;` and `&gt;` in text it should show as typed. Applied where a name, a
comment, a description or a service's message enters a mrkdwn string or a message's `text`;
not to `plain_text` objects (Slack does not parse them) nor to timebot's own markup
(`<!date^…>`), which is why escaping is at the entry point and never of a whole message."""

from __future__ import annotations

from typing import Any


def escape(text: Any) -> str:
    """`text` as Slack shows it typed: no link, mention or special command (`&` first)."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
