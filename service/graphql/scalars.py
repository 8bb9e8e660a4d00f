"""Custom scalars of the Svc schema. Parse errors name the value; graphql-core adds the argument."""

from __future__ import annotations

import re
from typing import Any

from ariadne import ScalarType
from graphql import GraphQLError

from service.ids import is_id

timestamp = ScalarType("SvcTimestamp")
svc_id = ScalarType("SvcId")
name = ScalarType("SvcName")
email = ScalarType("SvcEmail")
color = ScalarType("SvcColor")
currency = ScalarType("SvcCurrency")
date_iso = ScalarType("SvcDateISO")
following = ScalarType("SvcFollowingCondition")
approval_status = ScalarType("SvcApprovalStatus")
absence_unit = ScalarType("SvcAbsenceUnit")
json_scalar = ScalarType("SvcJSON")

_EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_CURRENCY_RE = re.compile(r"^[A-Z]{3}$")


def _literal(ast: Any) -> Any:
    from graphql import value_from_ast_untyped

    return value_from_ast_untyped(ast)


@timestamp.value_parser
def parse_timestamp(value: Any) -> int:
    if isinstance(value, bool):
        raise GraphQLError("SvcTimestamp must be milliseconds since the epoch, not a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value.strip()):
        return int(value)
    raise GraphQLError(f"SvcTimestamp must be an integer number of milliseconds, got {value!r}")


@timestamp.literal_parser
def parse_timestamp_literal(ast: Any, _variables: Any = None) -> int:
    return parse_timestamp(_literal(ast))


@timestamp.serializer
def serialize_timestamp(value: Any) -> int:
    return int(value)


@svc_id.value_parser
def parse_id(value: Any) -> str:
    if isinstance(value, str) and is_id(value.strip().lower()):
        return value.strip().lower()
    raise GraphQLError(f"SvcId must be 24 hexadecimal digits, got {value!r}")


@svc_id.literal_parser
def parse_id_literal(ast: Any, _variables: Any = None) -> str:
    return parse_id(_literal(ast))


@name.value_parser
def parse_name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise GraphQLError("SvcName must be a non-empty string")
    if len(value) > 255:
        raise GraphQLError("SvcName must be at most 255 characters")
    return value.strip()


@name.literal_parser
def parse_name_literal(ast: Any, _variables: Any = None) -> str:
    return parse_name(_literal(ast))


@email.value_parser
def parse_email(value: Any) -> str:
    if not isinstance(value, str) or not _EMAIL_RE.match(value.strip()):
        raise GraphQLError(f"SvcEmail must be an e-mail address, got {value!r}")
    return value.strip().lower()


@email.literal_parser
def parse_email_literal(ast: Any, _variables: Any = None) -> str:
    return parse_email(_literal(ast))


@color.value_parser
def parse_color(value: Any) -> str:
    if not isinstance(value, str) or len(value) > 32:
        raise GraphQLError("SvcColor must be a string of at most 32 characters")
    return value


@color.literal_parser
def parse_color_literal(ast: Any, _variables: Any = None) -> str:
    return parse_color(_literal(ast))


@currency.value_parser
def parse_currency(value: Any) -> str:
    if not isinstance(value, str) or not _CURRENCY_RE.match(value.strip().upper()):
        raise GraphQLError(f"SvcCurrency must be a three-letter currency code, got {value!r}")
    return value.strip().upper()


@currency.literal_parser
def parse_currency_literal(ast: Any, _variables: Any = None) -> str:
    return parse_currency(_literal(ast))


@following.value_parser
def parse_following(value: Any) -> str:
    if isinstance(value, str) and value.strip().upper() in ("AND", "OR"):
        return value.strip().upper()
    raise GraphQLError(f"SvcFollowingCondition must be AND or OR, got {value!r}")


@following.literal_parser
def parse_following_literal(ast: Any, _variables: Any = None) -> str:
    return parse_following(_literal(ast))


@approval_status.value_parser
def parse_approval_status(value: Any) -> str:
    if value in ("d", "s", "a", "r"):
        return str(value)
    raise GraphQLError(f"SvcApprovalStatus must be one of d, s, a, r, got {value!r}")


@approval_status.literal_parser
def parse_approval_status_literal(ast: Any, _variables: Any = None) -> str:
    return parse_approval_status(_literal(ast))


@absence_unit.value_parser
def parse_absence_unit(value: Any) -> str:
    if value in ("day", "hour"):
        return str(value)
    raise GraphQLError(f"SvcAbsenceUnit must be day or hour, got {value!r}")


@absence_unit.literal_parser
def parse_absence_unit_literal(ast: Any, _variables: Any = None) -> str:
    return parse_absence_unit(_literal(ast))


BINDABLES = [
    timestamp,
    svc_id,
    name,
    email,
    color,
    currency,
    date_iso,
    following,
    approval_status,
    absence_unit,
    json_scalar,
]
