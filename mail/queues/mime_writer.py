"""A small writer of the mail timebot sends: a text/plain part, or a multipart/alternative of a
text/plain and a text/html part, written straight to bytes.

What `email.message.EmailMessage` (set_content, add_alternative, as_bytes) would give, without
its header registry, policy folding and generator, which cost milliseconds per message:

- Line endings are `\\n`, as `as_bytes()` under `email.policy.default` writes them (what the
  outbox has always stored; the SMTP client sends them as CRLF).
- Bodies are UTF-8: 7bit when they are printable ASCII (and tabs) in lines of at most 78
  characters, else quoted-printable or base64 (whichever is shorter: lines of at most 76).
  Line breaks in a body (CRLF, CR or LF) become `\\n`, and a body ends with one.
- Headers are folded at spaces into lines of at most 78 characters where the words allow (a
  longer word, e.g. a long Message-ID, stays whole on a line of its own).
- A value is a str, written as it is when it is printable ASCII in single-spaced words; else
  (non-ASCII, control characters, runs of spaces, a word longer than any line may be (998
  octets), or `=?`, which a reader would decode) as RFC 2047 encoded words
  (`email.header.Header`), so that a reader gets the same str back.
- Address headers (From, To, Cc, Reply-To, …) are header syntax (`Name <addr>`, as
  EmailMessage takes them): only display names that are not ASCII are encoded, as one
  encoded word (`Zoë <z@example.com>` -> `=?utf-8?q?Zo=C3=AB?= <z@example.com>`, as
  email.utils.formataddr writes them; see _display_words), and encoded words given
  stay encoded words. An address whose addr-spec is not ASCII, or a group, is left to the
  email package, as before.
- Header values may not break lines: CR, LF, or another of the characters str.splitlines()
  breaks at (ValueError, as with EmailMessage).

`OutgoingMessage` wraps the bytes as an `EmailMessage` for the callers that expect one.
"""

from __future__ import annotations

import base64
import binascii
import random
import re
import sys
from collections.abc import Iterable, Sequence
from email import policy as email_policy
from email.charset import Charset
from email.header import Header
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import formataddr, getaddresses
from typing import Any

__all__ = ["LINESEP", "OutgoingMessage", "fold_header", "outgoing_message", "write_message"]

LINESEP = "\n"
MAX_LINE = 78  # what header folding and 7bit bodies aim for (RFC 5322 2.1.1 "SHOULD")
HARD_MAX_LINE = 998  # RFC 5322 2.1.1 "MUST", without the line ending

ADDRESS_HEADERS = frozenset({"from", "to", "cc", "bcc", "reply-to", "sender"})

_PLAIN = re.compile(r"[\x21-\x7e]+(?: [\x21-\x7e]+)*\Z")
_PRINTABLE = re.compile(r"[\x20-\x7e]*\Z")
_HEADER_NAME = re.compile(r"[\x21-\x39\x3b-\x7e]+\Z")  # printable ASCII but ':'
_ADDR_SPEC = re.compile(r"[\x21-\x7e]+\Z")
_LINE_BREAKS = re.compile(r"\r\n?")
# Where str.splitlines() breaks a line: EmailMessage refuses header values with these.
_LINE_BOUNDARY = re.compile("[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_NOT_7BIT = re.compile(r"[^\t\n\x20-\x7e]")
_POLICY = email_policy.default  # linesep "\n", max_line_length 78: what EmailMessage uses
_UTF8 = Charset("utf-8")


def _is_plain(value: str) -> bool:
    """Printable ASCII words with single spaces between them, nothing a reader would decode:
    written as it is (folded at its spaces)."""
    return bool(_PLAIN.match(value)) and "=?" not in value


def _fold_words(name: str, words: Sequence[str]) -> str | None:
    """`name: words…` folded before a word where a line would pass MAX_LINE characters (never
    before an empty word: no whitespace-only lines); None when a line passes HARD_MAX_LINE."""
    lines: list[str] = []
    line = f"{name}:"
    for index, word in enumerate(words):
        if index and word and len(line) + 1 + len(word) > MAX_LINE:
            lines.append(line)
            line = f" {word}"
        else:
            line = f"{line} {word}"
    lines.append(line)
    if any(len(each) > HARD_MAX_LINE for each in lines):
        return None
    return LINESEP.join(lines) + LINESEP


def _encoded(name: str, value: str) -> str:
    """The whole value as RFC 2047 encoded words (UTF-8), folded between them."""
    words = Header(value, "utf-8", header_name=name).encode(linesep=LINESEP).split()
    folded = _fold_words(name, words)
    assert folded is not None  # encoded words are at most 75 characters
    return folded


def _unstructured(name: str, value: str) -> str:
    if not value:
        return f"{name}: {LINESEP}"
    if _is_plain(value):
        folded = _fold_words(name, value.split(" "))
        if folded is not None:
            return folded
    return _encoded(name, value)


def _display_words(display: str, name: str | None) -> list[str]:
    """A display name as words: quoted when it needs it; when it is not printable ASCII, one
    encoded word, as email.utils.formataddr writes it (several encoded words in a display
    name read back with spaces between them in some readers, Python's among them), unless
    that word would not fit on a line. `name`: the header's, when the display name starts
    its first line."""
    if _PRINTABLE.match(display):
        # formataddr quotes (and escapes) the name when it needs it; the spaces inside the
        # quotes may become folding white space. (Encoded words stay what they are.)
        return formataddr((display, "x@x")).rpartition(" <")[0].split(" ")
    word = _UTF8.header_encode(display)
    if len(word) + len(name or "") + 2 <= HARD_MAX_LINE - 1:
        return [word]
    return Header(display, "utf-8", header_name=name).encode(linesep=LINESEP).split()


def _address_list(name: str, value: str) -> str:
    if not value:
        return f"{name}: {LINESEP}"
    if _PLAIN.match(value):
        folded = _fold_words(name, value.split(" "))
        if folded is not None:
            return folded
    pairs = getaddresses([value])
    if all(_ADDR_SPEC.match(address) for _, address in pairs):
        words: list[str] = []
        for index, (display, address) in enumerate(pairs):
            comma = "," if index < len(pairs) - 1 else ""
            if display:
                words += _display_words(display, None if words else name)
                words.append(f"<{address}>{comma}")
            else:
                words.append(f"{address}{comma}")
        folded = _fold_words(name, words)
        if folded is not None:
            return folded
    # Not what timebot writes (a group, an SMTPUTF8 address, …): as EmailMessage did.
    return str(_POLICY.header_factory(name, value).fold(policy=_POLICY))


def fold_header(name: str, value: str) -> str:
    """One header, `Name: value` folded, with its line ending."""
    if not _HEADER_NAME.match(name):
        raise ValueError(f"not a header name: {name!r}")
    if _LINE_BOUNDARY.search(value):
        raise ValueError("Header values may not contain linefeed or carriage return characters")
    if name.lower() in ADDRESS_HEADERS:
        return _address_list(name, value)
    return _unstructured(name, value)


def _body(text: str) -> tuple[str, bytes]:
    """(Content-Transfer-Encoding, the encoded body with `\\n` line endings)."""
    if "\r" in text:
        text = _LINE_BREAKS.sub("\n", text)
    if not text.endswith("\n"):
        text += "\n"
    data = text.encode("utf-8")
    if (
        len(data) == len(text)
        and not _NOT_7BIT.search(text)
        and max(map(len, text.split("\n"))) <= MAX_LINE
    ):
        return "7bit", data
    quoted = binascii.b2a_qp(data, istext=True)  # soft line breaks at 76, `=\n`
    base64_length = (len(data) + 2) // 3 * 4
    base64_length += -(-base64_length // 76)
    if len(quoted) <= base64_length:
        return "quoted-printable", quoted
    return "base64", base64.encodebytes(data)


def _part_head(subtype: str, transfer_encoding: str) -> str:
    return (
        f'Content-Type: text/{subtype}; charset="utf-8"{LINESEP}'
        f"Content-Transfer-Encoding: {transfer_encoding}{LINESEP}"
    )


def _boundary(bodies: Iterable[bytes]) -> str:
    while True:
        boundary = f"==============={random.randrange(sys.maxsize):019d}=="
        marker = f"--{boundary}".encode("ascii")
        if not any(marker in body for body in bodies):
            return boundary


def _write(
    headers: Sequence[tuple[str, str]], text: str, html: str | None
) -> tuple[bytes, list[tuple[str, str]]]:
    """The message's bytes, and its top-level MIME headers (unfolded)."""
    head = "".join(fold_header(name, value) for name, value in headers)
    text_encoding, text_body = _body(text)
    if html is None:
        mime = [
            ("Content-Type", 'text/plain; charset="utf-8"'),
            ("Content-Transfer-Encoding", text_encoding),
            ("MIME-Version", "1.0"),
        ]
        head += "".join(f"{name}: {value}{LINESEP}" for name, value in mime) + LINESEP
        return head.encode("ascii") + text_body, mime
    html_encoding, html_body = _body(html)
    boundary = _boundary((text_body, html_body))
    mime = [
        ("MIME-Version", "1.0"),
        ("Content-Type", f'multipart/alternative; boundary="{boundary}"'),
    ]
    head += (
        f"MIME-Version: 1.0{LINESEP}"
        f'Content-Type: multipart/alternative;{LINESEP} boundary="{boundary}"{LINESEP}'
        f"{LINESEP}--{boundary}{LINESEP}"
        + _part_head("plain", text_encoding)
        + LINESEP
    )
    middle = f"{LINESEP}--{boundary}{LINESEP}{_part_head('html', html_encoding)}{LINESEP}"
    tail = f"{LINESEP}--{boundary}--{LINESEP}"
    raw = b"".join((
        head.encode("ascii"), text_body, middle.encode("ascii"), html_body, tail.encode("ascii")
    ))
    return raw, mime


def write_message(
    headers: Sequence[tuple[str, str]], text: str, html: str | None = None
) -> bytes:
    """The message: `headers` in their order (From, To, Subject, Date, Message-ID, …), then
    the MIME headers and the body: `text` alone (text/plain), or with `html` a
    multipart/alternative of both."""
    return _write(headers, text, html)[0]


def outgoing_message(
    headers: Sequence[tuple[str, str]], text: str, html: str | None = None
) -> OutgoingMessage:
    """`write_message`, as an EmailMessage (`OutgoingMessage`)."""
    raw, mime = _write(headers, text, html)
    return OutgoingMessage(raw, [*headers, *mime])


# --- as an EmailMessage -------------------------------------------------------------------

# What email.message.Message.__init__ sets: reading any of them turns an OutgoingMessage into
# the parsed message (see OutgoingMessage).
_MESSAGE_STATE = frozenset({
    "policy", "_headers", "_unixfrom", "_payload", "_charset", "preamble", "epilogue",
    "defects", "_default_type",
})


class OutgoingMessage(EmailMessage):
    """Written bytes dressed as an `EmailMessage`: `as_bytes()` gives them, and the header
    getters (`msg[name]`, `get`, `get_all`, `in`) answer from the headers as they were given,
    as plain strings. Any other use (get_body, walk, setting or deleting a header, …) first
    parses the bytes (email.policy.default) into this object, which from then on is an
    ordinary EmailMessage (and `as_bytes()` generates its bytes again)."""

    def __init__(self, raw: bytes, headers: Sequence[tuple[str, str]]) -> None:
        # No EmailMessage.__init__: its state is made from `raw` when first asked for.
        fields: dict[str, list[str]] = {}
        for name, value in headers:
            fields.setdefault(name.lower(), []).append(value)
        self.__dict__["_raw"] = raw
        self.__dict__["_fields"] = fields

    @property
    def parsed(self) -> bool:
        """Whether this message has been parsed (is an ordinary EmailMessage now)."""
        return "_raw" not in self.__dict__

    def __getattr__(self, name: str) -> Any:
        if name in _MESSAGE_STATE and not self.parsed:
            self._parse()
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _parse(self) -> None:
        message = BytesParser(EmailMessage, policy=email_policy.default).parsebytes(
            self.__dict__["_raw"]
        )
        del self.__dict__["_raw"], self.__dict__["_fields"]
        self.__dict__.update(vars(message))

    def as_bytes(self, unixfrom: bool = False, policy: Any = None) -> bytes:
        raw = self.__dict__.get("_raw")
        if raw is not None and not unixfrom and policy is None:
            return raw  # type: ignore[no-any-return]
        return super().as_bytes(unixfrom, policy)

    def __bytes__(self) -> bytes:
        return self.as_bytes()

    def get(self, name: str, failobj: Any = None) -> Any:
        fields: dict[str, list[str]] | None = self.__dict__.get("_fields")
        if fields is None:
            return super().get(name, failobj)
        values = fields.get(name.lower())
        return values[0] if values else failobj

    def get_all(self, name: str, failobj: Any = None) -> Any:
        fields: dict[str, list[str]] | None = self.__dict__.get("_fields")
        if fields is None:
            return super().get_all(name, failobj)
        values = fields.get(name.lower())
        return list(values) if values else failobj

    def __getitem__(self, name: str) -> Any:
        return self.get(name)

    def __contains__(self, name: object) -> bool:
        fields: dict[str, list[str]] | None = self.__dict__.get("_fields")
        if fields is None:
            return super().__contains__(name)  # type: ignore[operator]
        return isinstance(name, str) and name.lower() in fields
