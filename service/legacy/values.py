"""The legacy interface's value conventions: date-times as `YYYY-MM-DD HH:MM:SS` in the
organisation's time zone, durations in seconds, and the checked string, name and boolean
members of a body's objects."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from service.graphql.name_arguments import control_character_problem
from service.legacy.errors import InvalidServiceRequest

DATETIME_FORMAT = "%Y-%m-%d %H:%M:%S"
MAX_NAME_LENGTH = 255


def parse_datetime(value: Any, member: str, zone: ZoneInfo) -> int:
    """`YYYY-MM-DD HH:MM:SS` in the organisation's time zone, as Unix ms."""
    if not isinstance(value, str):
        raise InvalidServiceRequest(f"{member} must be a string YYYY-MM-DD HH:MM:SS")
    try:
        moment = datetime.strptime(value, DATETIME_FORMAT)
    except ValueError:
        raise InvalidServiceRequest(
            f"{member} must use the format YYYY-MM-DD HH:MM:SS, got {value!r}"
        ) from None
    if not 1900 <= moment.year < 3000:
        raise InvalidServiceRequest(f"{member} must lie between 1900 and 2999, got {value!r}")
    return int(moment.replace(tzinfo=zone).timestamp() * 1000)


def format_datetime(ms: int, zone: ZoneInfo) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).astimezone(zone).strftime(DATETIME_FORMAT)


def seconds(ms: int) -> int | float:
    return ms // 1000 if ms % 1000 == 0 else ms / 1000


def string_field(data: dict[str, Any], name: str, member: str, required: bool) -> str | None:
    value = data.get(name)
    if value is None:
        if required:
            raise InvalidServiceRequest(f"{member}.{name} is required")
        return None
    if not isinstance(value, str):
        raise InvalidServiceRequest(f"{member}.{name} must be a string")
    return value


def name_field(data: dict[str, Any], member: str) -> str:
    name = (string_field(data, "name", member, True) or "").strip()
    if not name:
        raise InvalidServiceRequest(f"{member}.name must not be empty")
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidServiceRequest(f"{member}.name is longer than {MAX_NAME_LENGTH} characters")
    problem = control_character_problem(name)
    if problem is not None:
        raise InvalidServiceRequest(f"{member}.name {problem}")
    return name


def bool_field(data: dict[str, Any], name: str, member: str, default: bool | None) -> bool | None:
    value = data.get(name, default)
    if value is not None and not isinstance(value, bool):
        raise InvalidServiceRequest(f"{member}.{name} must be true or false")
    return value  # type: ignore[no-any-return]
