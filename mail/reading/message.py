"""Read a raw e-mail into a small typed ReadMessage: addresses, threading headers, the text.

`read_message(raw)` never raises on bad input: broken headers, bad base64, unknown or lying
charsets, truncated multiparts all yield what can be read (an empty text at worst).

The text is the first text/plain part that is not an attachment; without one, the first
text/html part turned into text (mail.reading.html_text). Parts inside attached messages
(message/rfc822) are not the reply's text.

Charsets: the declared one (with the usual supersets: gb2312 -> gb18030, iso-8859-1 and
us-ascii -> windows-1252, shift_jis -> cp932, ks_c_5601 -> cp949, ...); if the bytes do not
decode with it, UTF-8, then windows-1252, then latin-1 (which always succeeds).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from email import policy
from email.header import decode_header, make_header
from email.message import Message
from email.parser import BytesParser
from email.utils import collapse_rfc2231_value, getaddresses

from mail.reading.html_text import html_to_text

__all__ = ["ReadMessage", "decode_text", "read_message"]


@dataclass(frozen=True)
class ReadMessage:
    """What the mail flow needs to know about one message."""

    from_address: str | None  # the single From addr-spec, lower-cased; None if absent/several
    from_addresses: tuple[str, ...]  # every address found in From headers (lower-cased)
    from_name: str
    message_id: str | None  # with its angle brackets
    subject: str
    in_reply_to: tuple[str, ...]  # message ids, with angle brackets
    references: tuple[str, ...]
    to: tuple[str, ...]  # addresses of To and Cc, lower-cased
    return_path: str | None  # None: no Return-Path header; "" the null sender <>
    content_type: str  # of the whole message, e.g. "multipart/report"
    report_type: str | None  # report-type parameter of a multipart/report
    headers: tuple[tuple[str, str], ...]  # every header, in order, decoded (names as written)
    text: str  # the body text (quotes and all: see mail.reading.quotes)
    text_source: str  # "plain", "html" or "none"
    part_types: tuple[str, ...] = ()  # content types of the parts (not inside attached messages)

    def header(self, name: str) -> str | None:
        """The first header of that name (case-insensitive), or None."""
        wanted = name.lower()
        for key, value in self.headers:
            if key.lower() == wanted:
                return value
        return None

    def header_all(self, name: str) -> list[str]:
        wanted = name.lower()
        return [value for key, value in self.headers if key.lower() == wanted]

    @property
    def from_domain(self) -> str | None:
        if not self.from_address:
            return None
        return self.from_address.rpartition("@")[2] or None


# --- charsets ------------------------------------------------------------------------------

_SUPERSETS = {
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "euc-cn": "gb18030",
    "iso8859-1": "cp1252",
    "latin-1": "cp1252",
    "ascii": "cp1252",
    "shift_jis": "cp932",
    "euc_kr": "cp949",
    "ks_c_5601-1987": "cp949",
    "big5": "big5hkscs",
    "iso8859-9": "cp1254",
    "iso8859-11": "cp874",
    "tis-620": "cp874",
}


def _codec(charset: str | None) -> str | None:
    if not charset:
        return None
    name = charset.strip().strip('"').lower()
    if name in ("unknown-8bit", "x-unknown", "8bit", "binary", "default"):
        return None
    if name in _SUPERSETS:
        return _SUPERSETS[name]
    try:
        canonical = codecs.lookup(name).name
    except LookupError:
        return None
    return _SUPERSETS.get(canonical, canonical)


def decode_text(data: bytes, charset: str | None) -> str:
    """Bytes of a text part to str: declared charset, else UTF-8, windows-1252, latin-1."""
    tried: list[str] = []
    for candidate in (_codec(charset), "utf-8", "cp1252"):
        if candidate is None or candidate in tried:
            continue
        tried.append(candidate)
        try:
            return data.decode(candidate)
        except (UnicodeDecodeError, LookupError):
            continue
        except Exception:  # a codec may fail in unexpected ways on garbage
            continue
    return data.decode("latin-1")


# --- headers -------------------------------------------------------------------------------


def _decode_raw_header(value: str) -> str:
    """A header value as stored by the parser (maybe with RFC 2047 words) to text."""
    try:
        return str(make_header(decode_header(value)))
    except Exception:  # malformed encoded words: keep them as they are
        return value


_SPACES = re.compile(r"\s+")
_RAW_BYTES = re.compile("[\udc80-\udcff]")  # raw 8-bit bytes in a header (surrogateescape)


def _clean(value: str) -> str:
    return _SPACES.sub(" ", value.replace("\x00", "")).strip()


def _headers(message: Message) -> tuple[tuple[str, str], ...]:
    result: list[tuple[str, str]] = []
    try:
        raw_items = list(message.raw_items())
    except Exception:
        raw_items = []
    for name, value in raw_items:
        text = value if isinstance(value, str) else str(value)
        if _RAW_BYTES.search(text):
            text = decode_text(text.encode("utf-8", "surrogateescape"), None)
        if "=?" in text:
            text = _decode_raw_header(text)
        result.append((str(name), _clean(text)))
    return tuple(result)


def _first(headers: tuple[tuple[str, str], ...], name: str) -> str | None:
    for key, value in headers:
        if key.lower() == name:
            return value
    return None


_MSG_ID = re.compile(r"<[^<>\s]+>")


def _message_ids(value: str | None) -> tuple[str, ...]:
    if not value:
        return ()
    found = _MSG_ID.findall(value)
    if not found and value.strip() and " " not in value.strip():
        found = [f"<{value.strip().strip('<>')}>"]
    return tuple(found)


def _addresses(values: list[str]) -> list[tuple[str, str]]:
    try:
        pairs = getaddresses(values)
    except Exception:
        return []
    return [(name, address.strip().lower()) for name, address in pairs if "@" in address]


# --- body ----------------------------------------------------------------------------------


def _is_attachment(part: Message) -> bool:
    try:
        disposition = (part.get("Content-Disposition") or "").split(";", 1)[0].strip().lower()
    except Exception:
        return False
    return disposition == "attachment"


def _text_parts(message: Message) -> tuple[Message | None, Message | None]:
    """First inline text/plain and text/html, not descending into attached messages."""
    plain: Message | None = None
    html: Message | None = None
    stack: list[Message] = [message]
    while stack:
        part = stack.pop(0)
        try:
            content_type = part.get_content_type()
        except Exception:
            continue
        if part.is_multipart():
            payload = part.get_payload()
            if isinstance(payload, list):
                stack[0:0] = [p for p in payload if isinstance(p, Message)]
            continue
        if content_type.startswith("message/") or _is_attachment(part):
            continue
        if content_type == "text/plain" and plain is None:
            plain = part
        elif content_type == "text/html" and html is None:
            html = part
    return plain, html


def _part_types(message: Message, limit: int = 200) -> tuple[str, ...]:
    """The content types of the message's parts, not descending into attached messages."""
    found: list[str] = []
    stack: list[Message] = [message]
    while stack and len(found) < limit:
        part = stack.pop()
        try:
            content_type = part.get_content_type()
        except Exception:
            continue
        found.append(content_type)
        if content_type.startswith("message/"):
            continue
        payload = part.get_payload() if part.is_multipart() else None
        if isinstance(payload, list):
            stack.extend(p for p in payload if isinstance(p, Message))
    return tuple(found[1:])


def _part_text(part: Message) -> str:
    try:
        data = part.get_payload(decode=True)
    except Exception:
        data = None
    if not isinstance(data, bytes):
        payload = part.get_payload()
        data = payload.encode("utf-8", "replace") if isinstance(payload, str) else b""
    try:
        charset = part.get_param("charset")
    except Exception:
        charset = None
    if isinstance(charset, tuple):  # RFC 2231: (charset, language, value)
        charset = collapse_rfc2231_value(charset)
    declared = charset if isinstance(charset, str) else None
    return decode_text(data, declared)


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_message(raw: bytes) -> ReadMessage:
    """Parse raw message bytes (CRLF or LF) without ever raising on bad input."""
    try:
        # compat32: headers are decoded here (_headers) from their raw values; the default
        # policy would parse Content-Type anew on every access (a third of the time spent).
        message: Message = BytesParser(policy=policy.compat32).parsebytes(raw)
    except Exception:
        message = BytesParser(policy=policy.compat32).parsebytes(b"")
    headers = _headers(message)

    from_values = [value for key, value in headers if key.lower() == "from"]
    from_pairs = _addresses(from_values)
    from_addresses = tuple(address for _name, address in from_pairs)
    from_address = from_addresses[0] if len(from_addresses) == 1 else None
    from_name = from_pairs[0][0] if len(from_pairs) == 1 else ""

    recipients = [value for key, value in headers if key.lower() in ("to", "cc")]
    return_path_value = _first(headers, "return-path")
    return_path: str | None = None
    if return_path_value is not None:
        stripped = return_path_value.strip()
        if stripped in ("<>", ""):
            return_path = ""
        else:
            pairs = _addresses([stripped])
            return_path = pairs[0][1] if pairs else stripped.strip("<>").lower()

    try:
        content_type = message.get_content_type()
    except Exception:
        content_type = "text/plain"
    try:
        report = message.get_param("report-type")
    except Exception:
        report = None
    if isinstance(report, tuple):
        report = collapse_rfc2231_value(report)
    report_type = report.lower() if isinstance(report, str) else None

    text, source = "", "none"
    try:
        plain, html = _text_parts(message)
        if plain is not None:
            text, source = _normalise_newlines(_part_text(plain)), "plain"
            if not text.strip() and html is not None:
                text, source = html_to_text(_normalise_newlines(_part_text(html))), "html"
        elif html is not None:
            text, source = html_to_text(_normalise_newlines(_part_text(html))), "html"
    except Exception:  # a part so broken that the stdlib gave up
        text, source = "", "none"

    try:
        part_types = _part_types(message)
    except Exception:
        part_types = ()
    message_ids = _message_ids(_first(headers, "message-id"))
    return ReadMessage(
        from_address=from_address,
        from_addresses=from_addresses,
        from_name=from_name,
        message_id=message_ids[0] if message_ids else None,
        subject=_first(headers, "subject") or "",
        in_reply_to=_message_ids(_first(headers, "in-reply-to")),
        references=_message_ids(" ".join(v for k, v in headers if k.lower() == "references")),
        to=tuple(address for _name, address in _addresses(recipients)),
        return_path=return_path,
        content_type=content_type,
        report_type=report_type,
        headers=headers,
        text=text.replace("\x00", ""),
        text_source=source,
        part_types=part_types,
    )
