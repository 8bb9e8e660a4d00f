"""Plain fields: those a quicker graphql-core executor completes directly.

graphql-core spends several microseconds on every field of every object: a resolve info,
the default resolver, then `complete_value` walking the type wrappers. A week of time
records is ~700 fields, so that bookkeeping outweighed the database work. `FastExecutor`
keeps graphql-core's executor for everything and short-cuts only the fields whose value
cannot do anything surprising:

- the field has no arguments and either the default resolver (an attribute or mapping
  key of the parent value) or a resolver marked with `plain` (synchronous, a function of the
  parent value alone: it ignores `info`, writes nothing and refuses nothing);
- its type is a scalar/enum or an object type without `is_type_of`, possibly non-null, or
  a list of those.

Such a field is computed directly and completed as graphql-core would (same values, same
errors with the same paths and messages). Anything else — a resolver of its own, an awaitable
or callable value, an abstract type, nested lists, @defer/@stream — goes the ordinary way;
so does a plain value that raises, since computing it again is harmless.

`plain` marks a resolver as plain (the permission wrapper skips it too); the executor is
service/graphql/fast_executor.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

Resolver = TypeVar("Resolver", bound=Callable[..., Any])

_PLAIN: set[Callable[..., Any]] = set()


def plain(resolver: Resolver) -> Resolver:
    """Mark a field resolver as plain: synchronous, a pure function of the parent value (it
    ignores `info`, has no side effect and never raises PermissionDenied). Plain fields skip
    the permission wrapper and take the executor's short-cut."""
    _PLAIN.add(resolver)
    return resolver


def is_plain(resolver: Any) -> bool:
    try:
        return resolver in _PLAIN
    except TypeError:  # unhashable callables are never plain
        return False
