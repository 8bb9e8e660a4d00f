"""The HTML part of an outbox message, made safe to show inside GET /outbox/<key>: it goes into
a sandboxed iframe's `srcdoc` (no scripts, no forms, no plugins, an opaque origin, so it can
neither read the page nor act as the demo's user), and its links open in the whole tab (a
`<base target="_top">`, and the sandbox lets a click navigate the top page), so that the
review e-mail's Approve and Reject links work as in a mail client."""

from __future__ import annotations

import re
from email.message import EmailMessage

# What the iframe may do: open links (in the tab, or a new one), nothing else.
SANDBOX = "allow-popups allow-popups-to-escape-sandbox allow-top-navigation-by-user-activation"
BASE = '<base target="_top">'
_HEAD = re.compile(r"<head(\s[^>]*)?>", re.IGNORECASE)


def html_of(message: EmailMessage) -> str | None:
    """The message's text/html part as a document for srcdoc, or None when it has none."""
    part = message.get_body(preferencelist=("html",))
    if part is None:
        return None
    html = str(part.get_content())  # type: ignore[attr-defined]
    found = _HEAD.search(html)
    if found is None:
        return BASE + html
    return html[:found.end()] + BASE + html[found.end():]
