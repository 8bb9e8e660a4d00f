"""The audit row keeps a mutation's arguments as JSON gives them back; the usual ones (scalars
and lists of them) are copied without the round trip through text, with the same outcome."""

from __future__ import annotations

import json
import math
from enum import IntEnum
from typing import Any

import pytest

from service.graphql.execution import _as_json


class Level(IntEnum):
    LOW = 1


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"startTime": 1_700_000_000_000, "duration": 3_600_000, "personId": "p1",
         "projectIds": ["a", None, "b"], "comment": "é \"quoted\"", "wfh": True,
         "rate": 1.5, "taskId": None},
        {"ids": ("a", "b")},  # a tuple: a list in JSON
        {"input": {"name": "x", "tags": ["t"]}},
        {"nested": [["a"], {"k": 1}]},
        {"level": Level.LOW},
        {"odd": object()},  # default=str
    ],
)
def test_arguments_are_what_json_gives_back(args: dict[str, Any]) -> None:
    expected = json.loads(json.dumps(args, default=str))
    copied = _as_json(args)
    assert copied == expected
    assert json.dumps(copied) == json.dumps(expected)
    assert [type(value) for value in copied.values()] == [
        type(value) for value in expected.values()]


def test_a_copy_not_the_caller_s_lists() -> None:
    args = {"ids": ["a"], "x": math.inf}
    copied = _as_json(args)
    assert copied == {"ids": ["a"], "x": math.inf}
    assert copied["ids"] is not args["ids"]
