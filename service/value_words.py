"""A value a client sent, named in a refusal as GraphQL writes it: what type came beside the
one expected. Python's repr says `'24'` (a quote the reader must notice) and `None` (a word
GraphQL does not have); a person reads "got the text '24'" and "got null" (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

# A hostile or enormous value is shown cut: the message names it, it does not echo it.
SHOWN_CHARS = 60


def kind(value: Any) -> str:
    """`a number`, `a text`, `a boolean`, `null`, `a list`, `an object`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float, Decimal)):
        return "a number"
    if isinstance(value, str):
        return "a text"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def described(value: Any) -> str:
    """`the text '24'`, `the number 36`, `the boolean true`, `null`, `a list of 3`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {'true' if value else 'false'}"
    if isinstance(value, (int, float, Decimal)):
        return f"the number {value}"
    if isinstance(value, str):
        shown = value if len(value) <= SHOWN_CHARS else value[:SHOWN_CHARS] + "…"
        return f"the text {shown!r}"
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)}"
    return kind(value)


def _same_kind(value: Any, allowed: Sequence[Any]) -> bool:
    return any(kind(value) == kind(a) for a in allowed)


def choice_problem(allowed: Sequence[Any], value: Any) -> str:
    """`must be one of 12, 24, got the number 36`; when the type is wrong too, which type is
    wanted: `must be a number, one of 12, 24, got the text '24'`."""
    listed = ", ".join(map(str, allowed))
    if allowed and not _same_kind(value, allowed):
        kinds = " or ".join(dict.fromkeys(kind(a) for a in allowed))
        return f"must be {kinds}, one of {listed}, got {described(value)}"
    return f"must be one of {listed}, got {described(value)}"
