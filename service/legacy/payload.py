"""The legacy request body, decoded and checked as a whole before any service reads it.

Every value is checked once here, so that no handler meets what it cannot store or compute
with: nesting deeper than `MAX_INPUT_DEPTH`, strings with NUL characters or lone surrogates
or longer than `MAX_STRING_LENGTH`, numbers that are not finite (`NaN`, `Infinity`, which
Python's JSON decoder accepts) or beyond ±2^53 (what JSON numbers carry exactly). Each
error names the member (`time_entry.comment`).
"""

from __future__ import annotations

import json
from typing import Any

from service.graphql.limits import MAX_INPUT_DEPTH, string_problem
from service.legacy.errors import InvalidServiceRequest

MAX_NUMBER = 2**53


def _no_constant(name: str) -> Any:
    raise InvalidServiceRequest(f"the body contains {name}, which is not a JSON number")


def decode_payload(body: bytes) -> dict[str, Any]:
    try:
        payload = json.loads(body.decode("utf-8"), parse_constant=_no_constant)
    except RecursionError:
        raise InvalidServiceRequest(
            f"the body nests deeper than {MAX_INPUT_DEPTH} levels"
        ) from None
    except (UnicodeDecodeError, ValueError):  # also an int of more than 4300 digits
        raise InvalidServiceRequest("the body is not a valid JSON document") from None
    if not isinstance(payload, dict):
        raise InvalidServiceRequest("the body must be a JSON object")
    check_values(payload)
    return payload


def check_values(payload: dict[str, Any]) -> None:
    stack: list[tuple[str, Any, int]] = [(key, value, 1) for key, value in payload.items()]
    while stack:
        member, value, depth = stack.pop()
        if depth > MAX_INPUT_DEPTH:
            raise InvalidServiceRequest(f"{member} nests deeper than {MAX_INPUT_DEPTH} levels")
        if isinstance(value, str):
            problem = string_problem(value)
            if problem is not None:
                raise InvalidServiceRequest(f"{member} {problem}")
        elif isinstance(value, bool):
            continue
        elif isinstance(value, int | float):
            if value != value or not -MAX_NUMBER <= value <= MAX_NUMBER:
                raise InvalidServiceRequest(f"{member} is out of range (at most 2^53)")
        elif isinstance(value, list):
            items = enumerate(value)
            stack.extend((f"{member}[{index}]", item, depth + 1) for index, item in items)
        elif isinstance(value, dict):
            for key, item in value.items():
                problem = string_problem(key)
                if problem is not None:
                    raise InvalidServiceRequest(f"a member name in {member} {problem}")
                stack.append((f"{member}.{key}", item, depth + 1))
