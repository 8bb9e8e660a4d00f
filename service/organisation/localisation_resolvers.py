"""The SvcTimeZone scalar (an IANA zone name, checked by the registry's rule). The localisation
settings themselves are rows of `service/organisation/settings_registry.py`."""

from __future__ import annotations

from typing import Any

from ariadne import ScalarType
from graphql import GraphQLError, value_from_ast_untyped

from service.organisation.settings_registry import time_zone as zone_rule
from service.value_words import described

time_zone = ScalarType("SvcTimeZone")


def parse_time_zone(value: Any) -> str:
    try:
        return zone_rule(value)
    except ValueError as error:
        raise GraphQLError(f"SvcTimeZone: {error}, got {described(value)}") from None


def _parse_literal(ast: Any, _variables: Any = None) -> str:
    return parse_time_zone(value_from_ast_untyped(ast))


time_zone.set_value_parser(parse_time_zone)
time_zone.set_literal_parser(_parse_literal)

BINDABLES = [time_zone]
