"""Custom scalars of the Svc schema. Parse errors name the value; graphql-core adds the argument."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ariadne import ScalarType
from graphql import GraphQLError

from plumbing.ids import is_id
from service.value_words import described

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


# SvcTimestamp values lie within these years (a time outside them is a mistake, and outside
# datetime's years 1-9999 it cannot even be converted).
MIN_TIMESTAMP_MS = -2_208_988_800_000  # 1900-01-01T00:00:00Z
MAX_TIMESTAMP_MS = 32_503_680_000_000  # 3000-01-01T00:00:00Z


def parse_timestamp(value: Any) -> int:
    if isinstance(value, bool):
        raise GraphQLError("SvcTimestamp must be milliseconds since the epoch, not a boolean")
    shown = _shown(value)
    if isinstance(value, int):
        milliseconds = value
    elif isinstance(value, float) and value.is_integer():
        milliseconds = int(value)
    elif isinstance(value, str) and re.fullmatch(r"-?\d{1,40}", value.strip()):
        milliseconds = int(value)
    else:
        raise GraphQLError(f"SvcTimestamp must be an integer number of milliseconds, got {shown}")
    if not MIN_TIMESTAMP_MS <= milliseconds < MAX_TIMESTAMP_MS:
        raise GraphQLError(
            f"SvcTimestamp must lie between {MIN_TIMESTAMP_MS} (1900-01-01) and "
            f"{MAX_TIMESTAMP_MS} (3000-01-01), got {shown}"
        )
    return milliseconds



def _shown(value: Any) -> str:
    try:
        text = repr(value)
    except ValueError:  # an int of more than 4300 digits
        return "a number far too large"
    return text if len(text) <= 40 else text[:40] + "…"


def serialize_timestamp(value: Any) -> int:
    return int(value)


def parse_id(value: Any) -> str:
    if isinstance(value, str) and is_id(value.strip().lower()):
        return value.strip().lower()
    raise GraphQLError(f"SvcId must be 24 hexadecimal digits, got {described(value)}")



def parse_name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise GraphQLError("SvcName must be a non-empty string")
    if len(value) > 255:
        raise GraphQLError("SvcName must be at most 255 characters")
    return value.strip()



def parse_email(value: Any) -> str:
    if not isinstance(value, str) or not _EMAIL_RE.match(value.strip()):
        raise GraphQLError(f"SvcEmail must be an e-mail address, got {described(value)}")
    return value.strip().lower()



def parse_color(value: Any) -> str:
    if not isinstance(value, str) or len(value) > 32:
        raise GraphQLError("SvcColor must be a string of at most 32 characters")
    return value



def parse_currency(value: Any) -> str:
    if not isinstance(value, str) or not _CURRENCY_RE.match(value.strip().upper()):
        raise GraphQLError("SvcCurrency must be a three-letter currency code, got "
                           f"{described(value)}")
    return value.strip().upper()



def parse_following(value: Any) -> str:
    if isinstance(value, str) and value.strip().upper() in ("AND", "OR"):
        return value.strip().upper()
    raise GraphQLError(f"SvcFollowingCondition must be AND or OR, got {described(value)}")



def parse_approval_status(value: Any) -> str:
    if value in ("d", "s", "a", "r"):
        return str(value)
    raise GraphQLError(f"SvcApprovalStatus must be one of d, s, a, r, got {described(value)}")



def parse_absence_unit(value: Any) -> str:
    if value in ("day", "hour"):
        return str(value)
    raise GraphQLError(f"SvcAbsenceUnit must be day or hour, got {described(value)}")



def _bind(scalar: ScalarType, parse: Callable[[Any], Any]) -> None:
    def parse_literal(ast: Any, _variables: Any = None) -> Any:
        return parse(_literal(ast))

    scalar.set_value_parser(parse)
    scalar.set_literal_parser(parse_literal)


_bind(timestamp, parse_timestamp)
timestamp.set_serializer(serialize_timestamp)
_bind(svc_id, parse_id)
_bind(name, parse_name)
_bind(email, parse_email)
_bind(color, parse_color)
_bind(currency, parse_currency)
_bind(following, parse_following)
_bind(approval_status, parse_approval_status)
_bind(absence_unit, parse_absence_unit)

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
