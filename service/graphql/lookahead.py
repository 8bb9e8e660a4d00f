"""What a query asks for below a field, so that a resolver loads only that.

An over-approximation: fragments are expanded whatever their type condition and @skip /
@include are ignored, so a field that might be asked for counts as asked for.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    InlineFragmentNode,
    SelectionSetNode,
)


def subfields(
    nodes: Iterable[FieldNode], fragments: Mapping[str, FragmentDefinitionNode]
) -> dict[str, list[FieldNode]]:
    """The fields selected directly below `nodes` (by field name, not alias)."""
    found: dict[str, list[FieldNode]] = {}
    seen: set[str] = set()

    def visit(selection_set: SelectionSetNode | None) -> None:
        if selection_set is None:
            return
        for selection in selection_set.selections:
            if isinstance(selection, FieldNode):
                found.setdefault(selection.name.value, []).append(selection)
            elif isinstance(selection, InlineFragmentNode):
                visit(selection.selection_set)
            elif isinstance(selection, FragmentSpreadNode):
                name = selection.name.value
                fragment = fragments.get(name)
                if fragment is not None and name not in seen:
                    seen.add(name)
                    visit(fragment.selection_set)

    for node in nodes:
        visit(node.selection_set)
    return found


def requested(info: Any) -> dict[str, list[FieldNode]]:
    """The fields selected below the field being resolved."""
    return subfields(info.field_nodes, info.fragments)
