"""What a click or a modal carries back: the `value` of a button and a view's
`private_metadata` are strings timebot wrote, but they arrive from outside (any signed request
can carry any value) and are read here with a guard. A value that is not what timebot wrote
(not JSON, another shape, other types, too long) is a `BadValue`; the listener answers it (an
ephemeral message, a view error) instead of failing with a traceback."""

from __future__ import annotations

import json
from typing import Any

MAX_VALUE = 2000  # Slack's limit for a button's value; private_metadata's is 3000
BAD_BUTTON = ("This button is not one timebot can read (an old or altered message): "
              "open the request again from timebot's Home tab.")


class BadValue(ValueError):
    """A value that is not one timebot wrote."""


def first_action(body: dict[str, Any]) -> dict[str, Any]:
    """The clicked element (an empty dict when the request names none)."""
    actions = body.get("actions")
    first = actions[0] if isinstance(actions, list) and actions else None
    return first if isinstance(first, dict) else {}


def action_value(body: dict[str, Any]) -> str:
    value = first_action(body).get("value")
    return value if isinstance(value, str) else ""


def json_of(text: str, limit: int = 3000) -> Any:
    """The JSON a value holds, or BadValue."""
    if not text or len(text) > limit:
        raise BadValue("empty or too long")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        raise BadValue("not JSON") from error


def json_list(text: str, lengths: tuple[int, ...]) -> list[Any]:
    """A JSON array of one of `lengths` items, or BadValue."""
    value = json_of(text, MAX_VALUE)
    if not isinstance(value, list) or len(value) not in lengths:
        raise BadValue("not a list of the expected length")
    return value


def whole(value: Any, *, low: int = 0) -> int:
    """An int (not a bool, not a float) of at least `low`, or BadValue."""
    if type(value) is not int or value < low:
        raise BadValue("not a whole number")
    return value


def ident(value: Any, *, empty: bool = False, limit: int = 64) -> str:
    """An id: a string of at most `limit` characters (empty only if `empty`), or BadValue."""
    if not isinstance(value, str) or len(value) > limit or (not value and not empty):
        raise BadValue("not an id")
    return value
