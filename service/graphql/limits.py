"""What one GraphQL request may ask of the server, and the checks that hold it to that.

A request is refused with an error naming the limit it passed (`maxDepth`, ...) when it is
larger than anything the bot, the IDE or a real integration sends (each limit is at least
ten times what those send; `scripts/hostile_probe.py --documents` measures them). The checks
run before the expensive steps they protect: the body size before JSON decoding, the token
count while parsing, the document's shape (a walk that stops as soon as a limit is passed,
fragments expanded, so fragment cycles and fragment bombs stop too) before validation, and
the input values (variables and literal arguments: NUL characters, lone surrogates, overlong
strings, nesting) before execution. Every walk is iterative: no input nests deep enough to
exhaust Python's recursion limit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLSchema,
    InlineFragmentNode,
    ListValueNode,
    ObjectValueNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    StringValueNode,
    ValueNode,
    VariableNode,
    get_named_type,
    get_nullable_type,
    is_list_type,
)
from graphql.type import GraphQLObjectType, SchemaMetaFieldDef, TypeMetaFieldDef

_META_FIELDS = {"__schema": SchemaMetaFieldDef, "__type": TypeMetaFieldDef}

# The request body (bytes): HTTP 413 beyond it.
MAX_BODY_BYTES = 1_000_000
# Lexical tokens of a document: the parser stops there (bounds parse time and memory).
MAX_TOKENS = 15_000
# Nested field levels (the IDE's introspection query: 15; the bot: at most 5).
MAX_DEPTH = 40
# Fields of a document, fragments expanded (the IDE's introspection query: 229; a batch of
# the bot's reads: under 300).
MAX_FIELDS = 3_000
# Aliased fields of a document, fragments expanded (the bot's read batches alias each root
# field: under 50).
MAX_ALIASES = 1_000
# Root fields of a mutation operation (the bot sends one mutation a request). graphql-core
# runs mutation fields one after another through nested callbacks: each costs stack.
MAX_MUTATIONS = 100
# Estimated cost: every field counts 1, times the list factor for every list field above
# it (the introspection query: 4,882; a batch of 16 of the bot's reads: under 8,400).
LIST_FACTOR = 10
MAX_COST = 200_000
# Input values: characters of one string (a comment, a description), nesting of one value.
MAX_STRING_LENGTH = 20_000
MAX_INPUT_DEPTH = 32

LIMITS = {
    "maxBodyBytes": MAX_BODY_BYTES,
    "maxTokens": MAX_TOKENS,
    "maxDepth": MAX_DEPTH,
    "maxFields": MAX_FIELDS,
    "maxAliases": MAX_ALIASES,
    "maxMutations": MAX_MUTATIONS,
    "maxCost": MAX_COST,
    "maxStringLength": MAX_STRING_LENGTH,
    "maxInputDepth": MAX_INPUT_DEPTH,
}


def limit_error(limit: str, what: str) -> GraphQLError:
    return GraphQLError(f"The request exceeds the limit {limit} ({LIMITS[limit]}): {what}.")


@dataclass
class Shape:
    """What the walk counted (up to the first limit passed)."""

    depth: int = 0
    fields: int = 0
    aliases: int = 0
    mutations: int = 0
    cost: int = 0
    # variable name -> the argument it is first given to (for errors naming the argument)
    variable_arguments: dict[str, str] = field(default_factory=dict)


def check_document(
    schema: GraphQLSchema, document: DocumentNode
) -> tuple[Shape, GraphQLError | None]:
    """Walk every operation of a parsed (not yet validated) document; the first limit passed,
    or None. Unknown fields and fragments are skipped: validation reports them."""
    fragments = {
        definition.name.value: definition
        for definition in document.definitions
        if isinstance(definition, FragmentDefinitionNode)
    }
    shape = Shape()
    for definition in document.definitions:
        if not isinstance(definition, OperationDefinitionNode):
            continue
        root = schema.get_root_type(definition.operation)
        if definition.operation == OperationType.MUTATION:
            shape.mutations += _count_root_fields(definition.selection_set, fragments)
            if shape.mutations > MAX_MUTATIONS:
                return shape, limit_error("maxMutations", "too many mutations in one request")
        error = _walk(schema, definition.selection_set, root, fragments, shape)
        if error is not None:
            return shape, error
    return shape, None


def _count_root_fields(
    selection_set: SelectionSetNode, fragments: dict[str, FragmentDefinitionNode]
) -> int:
    count = 0
    stack = [selection_set]
    expanded = 0
    while stack and count <= MAX_MUTATIONS and expanded <= MAX_FIELDS:
        for selection in stack.pop().selections:
            expanded += 1
            if isinstance(selection, FieldNode):
                count += 1
            elif isinstance(selection, InlineFragmentNode):
                stack.append(selection.selection_set)
            elif isinstance(selection, FragmentSpreadNode):
                fragment = fragments.get(selection.name.value)
                if fragment is not None:
                    stack.append(fragment.selection_set)
    return count


def _walk(
    schema: GraphQLSchema,
    selection_set: SelectionSetNode,
    root: GraphQLObjectType | None,
    fragments: dict[str, FragmentDefinitionNode],
    shape: Shape,
) -> GraphQLError | None:
    # (selection set, its type, field depth, cost multiplier)
    stack: list[tuple[SelectionSetNode, Any, int, int]] = [(selection_set, root, 1, 1)]
    while stack:
        selections, parent, depth, factor = stack.pop()
        for selection in selections.selections:
            if isinstance(selection, FieldNode):
                shape.fields += 1
                shape.cost += factor
                shape.depth = max(shape.depth, depth)
                if selection.alias is not None:
                    shape.aliases += 1
                error = _check_counts(shape)
                if error is not None:
                    return error
                field_def = _field(parent, selection.name.value)
                for argument in selection.arguments or ():
                    error = _check_literal(argument.name.value, argument.value, shape)
                    if error is not None:
                        return error
                if selection.selection_set is not None:
                    child_type, child_factor = None, factor
                    if field_def is not None:
                        child_type = get_named_type(field_def.type)
                        if is_list_type(get_nullable_type(field_def.type)):
                            child_factor = factor * LIST_FACTOR
                    stack.append((selection.selection_set, child_type, depth + 1, child_factor))
            elif isinstance(selection, InlineFragmentNode):
                condition = parent
                if selection.type_condition is not None:
                    condition = schema.get_type(selection.type_condition.name.value)
                stack.append((selection.selection_set, condition, depth, factor))
            elif isinstance(selection, FragmentSpreadNode):
                fragment = fragments.get(selection.name.value)
                if fragment is not None:
                    condition = schema.get_type(fragment.type_condition.name.value)
                    stack.append((fragment.selection_set, condition, depth, factor))
    return None


def _field(parent: Any, name: str) -> Any:
    if name in _META_FIELDS:
        return _META_FIELDS[name]
    fields = getattr(parent, "fields", None)
    if not isinstance(fields, dict):
        return None
    return fields.get(name)


def _check_counts(shape: Shape) -> GraphQLError | None:
    if shape.depth > MAX_DEPTH:
        return limit_error("maxDepth", "fields are nested too deeply")
    if shape.fields > MAX_FIELDS:
        return limit_error("maxFields", "the document selects too many fields")
    if shape.aliases > MAX_ALIASES:
        return limit_error("maxAliases", "the document has too many aliases")
    if shape.cost > MAX_COST:
        return limit_error("maxCost", "the document may produce too large a result")
    return None


def _check_literal(argument: str, value: ValueNode, shape: Shape) -> GraphQLError | None:
    """A literal argument: its strings (NUL, length) and its nesting; the variables it uses
    are remembered under the argument's name."""
    stack: list[tuple[ValueNode, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_INPUT_DEPTH:
            return argument_error(
                argument, f"is nested deeper than {MAX_INPUT_DEPTH} levels (maxInputDepth)"
            )
        if isinstance(node, StringValueNode):
            problem = string_problem(node.value)
            if problem is not None:
                return argument_error(argument, problem)
        elif isinstance(node, ListValueNode):
            stack.extend((item, depth + 1) for item in node.values)
        elif isinstance(node, ObjectValueNode):
            stack.extend((item.value, depth + 1) for item in node.fields)
        elif isinstance(node, VariableNode):
            shape.variable_arguments.setdefault(node.name.value, argument)
    return None


def argument_error(argument: str, problem: str) -> GraphQLError:
    return GraphQLError(f'Invalid argument "{argument}": {problem}')


def string_problem(text: str) -> str | None:
    """Why a string may not be stored (NUL, lone surrogate, length), or None."""
    if len(text) > MAX_STRING_LENGTH:
        return f"is longer than {MAX_STRING_LENGTH} characters (maxStringLength)"
    if "\x00" in text:
        return "contains a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "contains a lone surrogate (not a Unicode character)"
    return None


def check_variables(variables: dict[str, Any], shape: Shape) -> GraphQLError | None:
    """The request's variables: strings and nesting, each error naming the argument that the
    variable is given to (or the variable when it is given to none)."""
    for name, value in variables.items():
        label = shape.variable_arguments.get(name) or f"${name}"
        stack: list[tuple[Any, int]] = [(value, 1)]
        while stack:
            item, depth = stack.pop()
            if depth > MAX_INPUT_DEPTH:
                return argument_error(
                    label, f"is nested deeper than {MAX_INPUT_DEPTH} levels (maxInputDepth)"
                )
            if isinstance(item, str):
                problem = string_problem(item)
                if problem is not None:
                    return argument_error(label, problem)
            elif isinstance(item, list):
                stack.extend((element, depth + 1) for element in item)
            elif isinstance(item, dict):
                for key, element in item.items():
                    problem = string_problem(key)
                    if problem is not None:
                        return argument_error(label, f"a key {problem}")
                    stack.append((element, depth + 1))
    return None
