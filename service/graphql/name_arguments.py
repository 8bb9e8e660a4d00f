"""Names refuse control characters, in every mutation that sets one.

A name travels: into mail headers (a person's name is the display name of every message to
them), Slack blocks, CSV exports, logs. A line break in one made the service's own mail fail
to render, for every poll, and the row stayed first in line (issue #23). So every mutation
argument that is a name — `name` (the `SvcName` scalar and its `String` twins), `…Name`,
`levelNames`, and the `name` of an input object such as a holiday — refuses CR, LF, tab and
the other C0 and C1 control characters with `Invalid argument "name": …`.

Found once at schema build (`checked_resolver` wraps only the mutations that take one),
checked before the resolver runs: nothing is written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from graphql import (
    GraphQLField,
    GraphQLInputObjectType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLScalarType,
)

from service.errors import BadInput

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
PROBLEM = "must not contain control characters (line breaks, tabs and the like)"


def control_character_problem(value: str) -> str | None:
    """Why `value` is no name (None when it may be one)."""
    return PROBLEM if _CONTROL.search(value) else None


def plain_name(value: str) -> str:
    """A name that came from elsewhere (an identity provider's claims, the command line),
    with each control character made a space: such a name is taken, not refused."""
    return _CONTROL.sub(" ", value)


def check_name(argument: str, value: Any) -> None:
    if isinstance(value, str) and _CONTROL.search(value):
        raise BadInput(argument, PROBLEM)


def _is_name(name: str) -> bool:
    return name == "name" or name.endswith(("Name", "Names"))


def _unwrapped(graphql_type: Any) -> Any:
    while isinstance(graphql_type, (GraphQLNonNull, GraphQLList)):
        graphql_type = graphql_type.of_type
    return graphql_type


def _name_paths(graphql_type: Any, name: str, depth: int = 0) -> list[tuple[str, ...]]:
    """The paths (input field names) under an argument of this type that hold names."""
    inner = _unwrapped(graphql_type)
    if isinstance(inner, GraphQLScalarType):
        return [()] if _is_name(name) or inner.name == "SvcName" else []
    if isinstance(inner, GraphQLInputObjectType) and depth < 3:
        return [(field_name, *rest)
                for field_name, field in inner.fields.items()
                for rest in _name_paths(field.type, field_name, depth + 1)]
    return []


def _values(value: Any, path: tuple[str, ...], label: str) -> Iterator[tuple[str, Any]]:
    """(argument label, string) for each value at `path` under `value` (lists walked)."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            yield from _values(item, path, f"{label}[{index}]")
        return
    if not path:
        yield label, value
        return
    if isinstance(value, dict) and path[0] in value:
        yield from _values(value[path[0]], path[1:], f"{label}.{path[0]}")


def checked_resolver(field: GraphQLField, resolve: Callable[..., Any]) -> Callable[..., Any]:
    """`resolve`, refusing a name with a control character first (only for the mutations that
    take a name: the others are given back as they are)."""
    checks = [(argument, path) for argument, definition in field.args.items()
              for path in _name_paths(definition.type, argument)]
    if not checks:
        return resolve

    def resolver(root: Any, info: Any, **args: Any) -> Any:
        for argument, path in checks:
            if argument in args:
                for label, value in _values(args[argument], path, argument):
                    check_name(label, value)
        return resolve(root, info, **args)

    return resolver
