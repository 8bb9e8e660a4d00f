"""HTML to text, for a message without a text/plain part (mail.reading.message): `html_to_text`
turns blocks into lines and <blockquote> and the usual quote containers of webmail clients into "> "
lines, drops signatures and scripts, and reads only the first MAX_HTML_CHARS characters."""

from __future__ import annotations

import re
from html.parser import HTMLParser

__all__ = ["MAX_HTML_CHARS", "html_to_text"]

_BLOCK = {
    "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "fieldset",
    "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header",
    "hr", "li", "main", "nav", "ol", "p", "pre", "section", "table", "tr", "ul",
}  # fmt: skip
_SKIP = {"script", "style", "head", "title", "template", "noscript", "object", "svg"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
         "track", "wbr"}  # fmt: skip
# containers that hold quoted history in webmail/desktop clients' HTML
_QUOTE_CLASSES = {"gmail_quote", "yahoo_quoted", "moz-cite-prefix", "protonmail_quote",
                  "zmail_extra", "ms-outlook-mobile-reference-message"}  # fmt: skip
_QUOTE_IDS = {"yahoo_quoted", "mail-editor-reference-message-container"}
_SIGNATURE_CLASSES = {"gmail_signature", "moz-signature", "signature"}
_SIGNATURE_IDS = {"applemailsignature", "signature", "ms-outlook-mobile-signature"}


_MAX_STACK = 400
MAX_HTML_CHARS = 300_000  # html_to_text reads no further (the reply is at the top)
_MAX_RENDERED_DEPTH = 8


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[tuple[int, str, bool]] = []  # (quote depth, text, preformatted)
        self._current: list[str] = []
        self._current_depth = 0
        self._stack: list[tuple[str, str]] = []  # (tag, role: "" | "quote" | "skip")
        self._quotes = 0  # open elements with role "quote"
        self._skips = 0
        self._in_pre = 0

    # depth / skipping come from the open elements
    @property
    def _depth(self) -> int:
        return min(self._quotes, _MAX_RENDERED_DEPTH)

    @property
    def _skipping(self) -> bool:
        return self._skips > 0

    def _flush(self) -> None:
        text = "".join(self._current)
        if text.strip() or self._in_pre:
            self.lines.append((self._current_depth, text, self._in_pre > 0))
        elif self.lines and self.lines[-1][1] != "":
            self.lines.append((self._current_depth, "", False))
        self._current = []
        self._current_depth = self._depth

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        tag = tag.lower()
        if tag in _BLOCK:
            self._flush()
        if tag == "hr" and not self._skipping:
            self.lines.append((self._depth, "________________________________", False))
        if tag in _VOID:
            return
        attributes = {key.lower(): (value or "") for key, value in attrs}
        classes = set(attributes.get("class", "").lower().split())
        element_id = attributes.get("id", "").lower()
        role = ""
        if tag in _SKIP or classes & _SIGNATURE_CLASSES or element_id in _SIGNATURE_IDS:
            role = "skip"
        elif (
            tag == "blockquote"
            or classes & _QUOTE_CLASSES
            or element_id in _QUOTE_IDS
        ):
            role = "quote"
        if len(self._stack) >= _MAX_STACK:
            return  # absurdly deep markup: what is deeper is read as plain text
        if tag == "pre":
            self._in_pre += 1
        self._stack.append((tag, role))
        self._quotes += role == "quote"
        self._skips += role == "skip"
        if tag in _BLOCK:
            self._current_depth = self._depth

    def handle_endtag(self, tag: str) -> None:
        tag = tag.lower()
        if tag in _VOID:
            if tag == "br":
                self._flush()
            return
        for index in range(len(self._stack) - 1, max(-1, len(self._stack) - 65), -1):
            if self._stack[index][0] == tag:
                closed = self._stack[index:]
                if any(t in _BLOCK for t, _ in closed):
                    self._flush()
                del self._stack[index:]
                self._quotes -= sum(role == "quote" for _t, role in closed)
                self._skips -= sum(role == "skip" for _t, role in closed)
                if tag == "pre":
                    self._in_pre = max(0, self._in_pre - 1)
                self._current_depth = self._depth
                return

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag.lower() not in _VOID:
            self.handle_endtag(tag)

    def handle_data(self, data: str) -> None:
        if self._skipping:
            return
        if not self._current:
            self._current_depth = self._depth
        if self._in_pre:
            parts = data.split("\n")
            for index, part in enumerate(parts):
                if index:
                    self._flush()
                self._current.append(part)
        else:
            self._current.append(re.sub(r"[ \t\r\n\f]+", " ", data))

    def text(self) -> str:
        self._flush()
        out: list[str] = []
        for depth, line, preformatted in self.lines:
            line = line.replace("\xa0", " ")
            line = line.rstrip() if preformatted else line.strip()
            out.append(("> " * depth + line).rstrip() if depth else line)
        text = "\n".join(out)
        return re.sub(r"\n{3,}", "\n\n", text).strip("\n")


def html_to_text(html: str) -> str:
    """Readable text of an HTML body; quoted history becomes "> " lines."""
    parser = _TextExtractor()
    try:
        parser.feed(html[:MAX_HTML_CHARS])
        parser.close()
    except Exception:  # HTMLParser is tolerant; this is belt and braces
        pass
    return parser.text()
