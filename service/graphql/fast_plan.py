"""What service.graphql.fast_executor's short-cut knows of a field it completes (`_Plan`), and
the markers it passes around."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable
from typing import Any, NamedTuple

from graphql import GraphQLLeafType, GraphQLOutputType


class _Plan(NamedTuple):
    name: str  # the field's name (the attribute or key the default resolver reads)
    resolver: Callable[..., Any] | None  # a plain resolver, or None for the default one
    return_type: GraphQLOutputType
    non_null: bool
    is_list: bool
    item_type: GraphQLOutputType  # the list's item type with its non-null wrapper
    item_non_null: bool
    leaf: GraphQLLeafType | None
    object_type: Any  # GraphQLObjectType for objects, None for leaves
    subfields: Any  # the object type's grouped field set (graphql-core memoizes it)
    null_message: str


_MISSING: Any = object()
# Values that are neither callable, awaitable, exceptions nor lists: returned as they are.
_SIMPLE = frozenset({str, int, bool, float, type(None)})
# Whether values of a type are mappings (the default resolver reads keys, not attributes).
_MAPPING_TYPES: dict[type, bool] = {}
_FALLBACK: Any = object()


async def settle_fields(results: dict[str, Any], awaitable_fields: list[str]) -> dict[str, Any]:
    """An object's fields whose values wait (`awaitable_fields` of `results`), awaited one by
    one, not gathered (a task each cost more than the fields; they share the request's
    session). After an error the rest still run, as when gathered."""
    for index, field in enumerate(awaitable_fields):
        try:
            results[field] = await results[field]
        except Exception:
            for rest in awaitable_fields[index + 1:]:
                with contextlib.suppress(Exception):
                    await results[rest]
            raise
        except BaseException:  # coroutines closed, futures cancelled
            for pending in (results[name] for name in awaitable_fields[index + 1:]):
                getattr(pending, "close" if inspect.iscoroutine(pending) else "cancel", str)()
            raise
    return results
