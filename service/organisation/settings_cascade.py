"""Where a setting's value comes from: the most specific level that sets it wins.

A person's value: their own, else their deepest tag's (the highest level; among equals the
first by name, then id; archived tags do not count), else the account's, else the default.
A tag's: its own, else the account's. A project's: its own only (unset, the entry's owner's
value applies). `path` names the one entity the value comes from (empty: the default).

Values live in each entity's `settings` JSON under the setting's name, or in a column of the
entity where the registry says so (the account's and a person's time zone and currency).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy.ext.asyncio import AsyncSession

from service.access import person_tags
from service.models import Organisation, Person
from service.organisation.settings_registry import BY_NAME, LOCALISATION, Setting

COLLECTIONS = {"organisation": "organisations", "tag": "tags", "person": "persons",
               "project": "projects"}
# (found, value) of one entity at one level.
Read = Callable[[Any, str], tuple[bool, Any]]


@dataclass
class Resolved:
    value: Any
    # Where the value comes from: [{"id", "collection", "name"}] (empty: nowhere, default).
    path: list[dict[str, str]] = field(default_factory=list)


def json_reader(key: str) -> Read:
    def read(entity: Any, _level: str) -> tuple[bool, Any]:
        settings = entity.settings or {}
        return key in settings, settings.get(key)

    return read


# Each setting's reader, built once (by identity; the setting is kept, so its id stays its
# own): a request resolves a dozen settings of each person it shows.
_READERS: dict[int, tuple[Setting, Read]] = {}


def reader(setting: Setting) -> Read:
    known = _READERS.get(id(setting))
    if known is not None and known[0] is setting:
        return known[1]
    read = _reader(setting)
    _READERS[id(setting)] = (setting, read)
    return read


def _reader(setting: Setting) -> Read:
    by_json = json_reader(setting.key)

    def read(entity: Any, level: str) -> tuple[bool, Any]:
        column = setting.columns.get(level)
        if column is None:
            return by_json(entity, level)
        value = getattr(entity, column)
        return value is not None, value

    return read


def own(entity: Any, level: str, read: Read) -> Resolved | None:
    found, value = read(entity, level)
    if not found:
        return None
    return Resolved(value, [{"id": entity.id, "collection": COLLECTIONS[level],
                             "name": entity.name}])


def set_json(entity: Any, key: str, value: Any, column: str = "settings") -> None:
    """Set (or with None, clear) one key of a JSON column; JSON columns are replaced, never
    mutated in place, so that the change is flushed."""
    stored = dict(getattr(entity, column) or {})
    if value is None:
        stored.pop(key, None)
    else:
        stored[key] = value
    setattr(entity, column, stored)


def store(entity: Any, level: str, setting: Setting, value: Any) -> None:
    column = setting.columns.get(level)
    if column is None:
        set_json(entity, setting.key, value)
    else:
        setattr(entity, column, value)


def first(*candidates: Resolved | None, default: Any = None) -> Resolved:
    return next((c for c in candidates if c is not None), Resolved(default, []))


async def for_person(session: AsyncSession, organisation: Organisation, person: Person | None,
                     read: Read, default: Any = None,
                     ties: Callable[[list[Any]], Any] | None = None) -> Resolved:
    """Person, else their deepest tag (or with `ties`, all their deepest tags that set it,
    their values combined by it), else the account, else the default."""
    if person is not None:
        mine = own(person, "person", read)
        if mine is not None:
            return mine
        tags = [t for t in await person_tags(session, organisation.id, person.id)
                if not t.archived and read(t, "tag")[0]]
        if tags:
            tags.sort(key=lambda t: (-t.level, t.name, t.id))
            if ties is None:
                return first(own(tags[0], "tag", read))
            found = [first(own(t, "tag", read)) for t in tags if t.level == tags[0].level]
            return Resolved(ties([f.value for f in found]), [p for f in found for p in f.path])
    return first(own(organisation, "organisation", read), default=default)


async def effective(session: AsyncSession, organisation: Organisation, level: str, entity: Any,
                    setting: Setting) -> Resolved:
    """The setting's value as the entity at `level` shows it."""
    read = reader(setting)
    if level == "person":
        return await for_person(session, organisation, entity, read, setting.default,
                                setting.ties)
    if level == "project":
        return first(own(entity, level, read))
    account = own(organisation, "organisation", read)
    if level == "tag":
        return first(own(entity, level, read), account, default=setting.default)
    return first(account, default=setting.default)


async def person_zone(session: AsyncSession, organisation: Organisation,
                      person: Person) -> ZoneInfo:
    """The time zone the person's days are counted in (their `localisation.timeZone`: person,
    else their deepest tag, else the account); UTC for a name no longer known."""
    setting = BY_NAME[(LOCALISATION, "timeZone")]
    name = (await for_person(session, organisation, person, reader(setting))).value
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")
