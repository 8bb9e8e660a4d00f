"""Checks of text that comes from outside (an SMTP envelope, a mail header, a Slack request)
before it is stored or looked up: no column of text takes a NUL on PostgreSQL."""

from __future__ import annotations


def has_control(text: str) -> bool:
    """Whether `text` holds a C0 control character (NUL, escape, line breaks…) or DEL."""
    return any(ord(char) < 0x20 or ord(char) == 0x7F for char in text)
