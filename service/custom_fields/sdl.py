"""The SDL written from the custom-field registry (`service/custom_fields/registry.py`): one
`editCustomField<Type>Option<Name>` mutation per option a mutation edits, and one
`editCustomFieldValue<Type>` per type (signatures as the hosted schema has them).
`service/custom_fields/custom_fields.graphql` holds the types they return."""

from __future__ import annotations

from functools import cache

from service.custom_fields.registry import TYPES, FieldType, Option


def option_mutation(kind: FieldType, option: Option) -> str:
    return f"editCustomField{kind.mutation_name}Option{option.capitalised}"


def value_mutation(kind: FieldType) -> str:
    return f"editCustomFieldValue{kind.value_name}"


@cache
def custom_fields_sdl() -> str:
    lines = [f"  {option_mutation(kind, option)}(id: SvcId!, {option.name}: {option.argument})"
             ": SvcCustomField!\n"
             for kind in TYPES for option in kind.options if option.edited]
    lines += [f"  {value_mutation(kind)}(id: SvcId!, {kind.value_argument}: {kind.value_type})"
              ": SvcCustomFieldValue!\n" for kind in TYPES]
    return "extend type Mutation {\n" + "".join(lines) + "}\n"
