"""Arguments for every root field of the schema, built from the field's own argument types: what
a careless or hostile client sends (tests/service/graphql/test_schema_sweep.py).

Each *strategy* gives one value for every argument of a field:
- `plain`: a well-formed value of each type (an existing id of the entity the argument names);
- `absent`: the ids of nothing, empty strings and lists, optional input fields left out;
- `edge`: the limits (the largest 32-bit integers, the first and last timestamps the scalar
  takes, the longest strings a client may send, lists of many duplicates), and for the
  scalars that take any JSON value (the schema's open scalars: days, time zones, formats,
  rates' patterns…) a value of another JSON type (an object, a number beyond 64 bits, a list,
  a string that is none of the names).

The document selects `__typename` of an object result (valid for any object type), nothing of
a scalar one; variables carry the values, as clients send them."""

from __future__ import annotations

import json
from typing import Any

from graphql import (
    GraphQLEnumType,
    GraphQLField,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLScalarType,
    GraphQLSchema,
    get_named_type,
    is_leaf_type,
)

from service.graphql.limits import MAX_STRING_LENGTH
from service.graphql.scalars import MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS

STRATEGIES = ("plain", "absent", "edge")
OMIT = object()
LONG = MAX_STRING_LENGTH  # characters of the longest string the service takes

# The scalars the service parses itself: a well-formed value, and the edge of what it takes.
_KNOWN: dict[str, tuple[Any, Any]] = {
    "Int": (1, 2_147_483_647),
    "Float": (1.5, 1e308),
    "String": ("Hello", "x" * (LONG - 3) + "\u00e9\U0001f4a5\u0000"),
    "Boolean": (True, False),
    "ID": ("1", "9" * 40),
    "SvcTimestamp": (1_767_571_200_000, MAX_TIMESTAMP_MS - 1),
    "SvcDateISO": ("2026-01-05", "9999-12-31"),
    "SvcName": ("Named", "N" * 255),
    "SvcEmail": ("someone@example.com", "a" * 64 + "@" + "b" * 180 + ".example"),
    "SvcColor": ("#336699", "#" + "f" * 31),
    "SvcCurrency": ("EUR", "XXX"),
    "SvcFollowingCondition": ("AND", "OR"),
    "SvcApprovalStatus": ("s", "r"),
    "SvcAbsenceUnit": ("day", "hour"),
    "SvcJSON": ({"a": 1}, {"a": [[[[{"b": "c" * 1000}]]]] * 50, "n\u0000": "\u0000\ud800"}),
}
_ABSENT: dict[str, Any] = {
    "Int": 0, "Float": 0.0, "String": "", "Boolean": False, "ID": "",
    "SvcTimestamp": MIN_TIMESTAMP_MS, "SvcDateISO": "1900-01-01", "SvcName": "x",
    "SvcEmail": "x@y.example", "SvcColor": "", "SvcCurrency": "AAA",
    "SvcFollowingCondition": "OR", "SvcApprovalStatus": "d", "SvcAbsenceUnit": "hour",
    "SvcJSON": {},
}
# Guesses at a well-formed value of the open scalars, by name; anything else gets "x".
_OPEN_PLAIN: dict[str, Any] = {
    "SvcTimeZone": "Europe/Berlin", "SvcCountry": "DE", "SvcDay": "monday",
    "SvcFirstDayOfWeek": "monday", "SvcDateFormat": "dd/MM/yyyy", "SvcDecimalFormat": ".",
    "SvcThousandSeparator": ",", "SvcTimeFormat": "HH:mm", "SvcType": "project",
    "SvcMessageContent": "A message", "SvcMessageType": "text", "SvcApprovalStageType": "ppm",
    "SvcRateType": "billable", "SvcRecordType": "time", "SvcPeriodicity": "weekly",
    "SvcInterval": "week", "SvcReportPeriod": "month", "SvcRecurrenceMode": "daily",
}
_ALIENS = ({"__proto__": {"x": 1}}, -9_007_199_254_740_993, ["a", 1, None], "zz\u0000",
           1e-320, True, 10**30, "y" * 5000)


class Ids:
    """Existing ids by what an argument or field names (a person of the organisation unless
    another entity is named), and an id of nothing."""

    NOTHING = "0" * 24

    def __init__(self, by_entity: dict[str, str], default: str) -> None:
        self.by_entity = {key.lower(): value for key, value in by_entity.items()}
        self.default = default

    def for_name(self, *names: str) -> str:
        for name in names:
            lowered = name.lower()
            for entity, value in self.by_entity.items():
                if entity in lowered:
                    return value
        return self.default


def document(kind: str, name: str, field: GraphQLField) -> str:
    """`mutation($a: T!, …) { name(a: $a) { __typename } }` (a leaf result: no selection)."""
    declared = ", ".join(f"${arg}: {spec.type}" for arg, spec in field.args.items())
    passed = ", ".join(f"{arg}: ${arg}" for arg in field.args)
    selection = "" if is_leaf_type(get_named_type(field.type)) else " { __typename }"
    head = f"{kind}({declared})" if declared else kind
    call = f"{name}({passed})" if passed else name
    return f"{head} {{ {call}{selection} }}"


def variables(schema: GraphQLSchema, name: str, field: GraphQLField, strategy: str,
              ids: Ids) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for arg, spec in field.args.items():
        value = _value(spec.type, strategy, ids, (name, arg), 0)
        if value is not OMIT:
            values[arg] = value
    return values


def _value(kind: GraphQLInputType, strategy: str, ids: Ids, names: tuple[str, ...],
           depth: int) -> Any:
    required = isinstance(kind, GraphQLNonNull)
    inner = kind.of_type if isinstance(kind, GraphQLNonNull) else kind
    if isinstance(inner, GraphQLList):
        item = _value(inner.of_type, strategy, ids, names, depth + 1)
        if item is OMIT:
            return [] if required else OMIT
        if strategy == "absent":
            return []
        if strategy == "edge":  # many of a small item; a large one twice (a body under 1 MB)
            return [item] * 200 if len(json.dumps(item)) < 100 else [item, item]
        return [item]
    if isinstance(inner, GraphQLInputObjectType):
        if depth > 4:
            return OMIT if not required else {}
        fields = {}
        for key, spec in inner.fields.items():
            if strategy == "absent" and not isinstance(spec.type, GraphQLNonNull):
                continue
            value = _value(spec.type, strategy, ids, (*names, key), depth + 1)
            if value is not OMIT:
                fields[key] = value
        return fields
    if isinstance(inner, GraphQLEnumType):
        members = list(inner.values)
        return members[-1] if strategy == "edge" else members[0]
    assert isinstance(inner, GraphQLScalarType)
    return _scalar(inner.name, strategy, ids, names)


def _scalar(name: str, strategy: str, ids: Ids, names: tuple[str, ...]) -> Any:
    if name == "SvcId":
        if strategy == "absent":
            return Ids.NOTHING
        if strategy == "edge":
            return "f" * 24
        return ids.for_name(*reversed(names))
    if name in _KNOWN:
        plain, edge = _KNOWN[name]
        if strategy == "absent":
            return _ABSENT[name]
        return edge if strategy == "edge" else plain
    # An open scalar: any JSON value reaches the resolver.
    if strategy == "absent":
        return ""
    if strategy == "edge":
        return _ALIENS[sum(map(ord, "".join(names))) % len(_ALIENS)]
    return _OPEN_PLAIN.get(name, "x")
