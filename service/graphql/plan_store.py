"""The executor's plans kept from one request to the next, per prepared operation: one prepared
plan per operation the fronts send (issue #26).

graphql-core and service.graphql.fast_executor plan a request as they execute it: which fields
each object selects (`collect_subfields`), and for each field how its values are completed
(`_Plan`). Both were memoized for one request only, so every request of the same document
planned it again — about an eighth of the Python calls of an approval reply's reads.

What a plan depends on: the schema, the operation and its fragments, the runtime object types
(part of every key), and the variables only through the directives that include, skip, defer
or stream selections. An operation without any directive therefore has one plan whatever its
variables, and it is kept here for as long as its parsed document is (service.graphql.documents
caches it, so the same operation node comes back), keyed by the ids of the schema and the
operation node. An operation with a directive is planned per request, as before.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
)


class SharedPlans:
    """Everything the executor memoizes for one operation, shared by its requests."""

    __slots__ = ("lists", "objects", "planned", "plans", "roots", "sub_fields")

    def __init__(self) -> None:
        self.plans: dict[Any, Any] = {}
        self.objects: dict[Any, Any] = {}
        self.lists: dict[Any, Any] = {}
        self.planned: list[Any] = []  # keeps the keyed lists alive (ids stay unique)
        self.sub_fields: dict[Any, Any] = {}  # graphql-core's `_relevant_sub_fields`
        self.roots: dict[int, Any] = {}  # the root fields' grouped field set, by root type


# (schema, operation) -> (the schema, kept alive so that its id stays its own; the plans, or
# None for an operation planned per request). An entry goes when its operation node does
# (the documents' cache let go of it): `weakref.finalize`.
_PLANS: dict[tuple[int, int], tuple[Any, SharedPlans | None]] = {}


def shared_plans(schema: Any, operation: OperationDefinitionNode,
                 fragments: Mapping[str, Any]) -> SharedPlans | None:
    """The operation's plans shared across requests; None when they depend on the variables
    (a directive somewhere in it)."""
    key = (id(schema), id(operation))
    found = _PLANS.get(key)
    if found is not None:
        return found[1]
    entry = None if _has_directives(operation.selection_set, fragments, set()) else \
        SharedPlans()
    _PLANS[key] = (schema, entry)
    weakref.finalize(operation, _PLANS.pop, key, None)
    return entry


def _has_directives(selection_set: SelectionSetNode | None, fragments: Mapping[str, Any],
                    seen: set[str]) -> bool:
    """Whether anything selected carries a directive, or spreads a fragment with variables of
    its own (graphql-core's experimental fragment arguments): then the plan may depend on the
    variables. `fragments`: graphql-core's FragmentDetails (or definitions) by name."""
    if selection_set is None:
        return False
    for selection in selection_set.selections:
        if selection.directives:
            return True
        if isinstance(selection, FieldNode | InlineFragmentNode):
            if _has_directives(selection.selection_set, fragments, seen):
                return True
        elif isinstance(selection, FragmentSpreadNode):
            name = selection.name.value
            if name in seen:
                continue
            seen.add(name)
            details = fragments.get(name)
            if details is None:
                continue
            if getattr(details, "variable_signatures", None):
                return True
            fragment: FragmentDefinitionNode = getattr(details, "definition", details)
            if fragment.directives or _has_directives(fragment.selection_set, fragments, seen):
                return True
    return False


def kept() -> int:
    """How many operations have an entry (tests)."""
    return len(_PLANS)
