"""Editable attributes of people, projects, tags and tasks, one table of rows (`ATTRIBUTES`)
from which the edit<Kind><Attribute> mutations and the attributes' reads are derived: the
description (every kind) and the validity period (people, projects, tags); and
pasteAttributes, which copies named attributes from one item to another (these, the color,
and the groups of account settings an item holds: timeSettings, localisation,
emailTemplates, notificationSettings). Each kind is edited with its permission; the settings
groups also need the settings permission."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ariadne import MutationType, ObjectType

from service.access import PEOPLE, PROJECTS, TAGS, TASKS, guard_administrators, require
from service.access import SETTINGS as SETTINGS_PERMISSION
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import Person, Project, Tag, Task
from service.organisation.settings_cascade import reader, set_json, store
from service.organisation.settings_registry import ATTRIBUTES as SETTINGS_GROUPS
from service.organisation.settings_registry import SETTINGS

mutation = MutationType()

DESCRIPTION_MAX = 10_000


@dataclass(frozen=True)
class Kind:
    name: str  # Person: edit<Person>…, the GraphQL type SvcPerson
    model: Any
    permission: str
    label: str


KINDS: Mapping[str, Kind] = {
    "person": Kind("Person", Person, PEOPLE, "person"),
    "project": Kind("Project", Project, PROJECTS, "project"),
    "tag": Kind("Tag", Tag, TAGS, "tag"),
    "task": Kind("Task", Task, TASKS, "task"),
}


def _description_of(item: Any) -> Any:
    if isinstance(item, Task):
        return item.description
    return (item.settings or {}).get("description")


def _set_description(item: Any, value: Any) -> None:
    if isinstance(item, Task):
        item.description = value
    else:
        set_json(item, "description", value)


def _check_description(args: Mapping[str, Any]) -> Any:
    text = args.get("description")
    if text is not None and len(text) > DESCRIPTION_MAX:
        raise BadInput("description", f"is longer than {DESCRIPTION_MAX} characters")
    return text or None


def _period_of(item: Any) -> Any:
    return (item.settings or {}).get("validityPeriod")


def _check_period(args: Mapping[str, Any]) -> Any:
    start, end = args.get("startTime"), args.get("endTime")
    if start is not None and end is not None and end < start:
        raise BadInput("endTime", "is before startTime")
    return None if start is None and end is None else {"start": start, "end": end}


def _read_period(item: Any) -> dict[str, Any]:
    period = _period_of(item)
    value = None if period is None else {"startTime": period.get("start"),
                                         "endTime": period.get("end")}
    return {"value": value, "path": []}


@dataclass(frozen=True)
class Attribute:
    name: str  # the GraphQL attribute (description, validityPeriod)
    kinds: tuple[str, ...]
    check: Callable[[Mapping[str, Any]], Any]  # the mutation's arguments -> the value kept
    get: Callable[[Any], Any]  # the value kept
    put: Callable[[Any, Any], None]
    show: Callable[[Any], Any]  # the attribute as read

    @property
    def capitalised(self) -> str:
        return self.name[0].upper() + self.name[1:]


ATTRIBUTES: tuple[Attribute, ...] = (
    Attribute("description", ("person", "project", "tag", "task"), _check_description,
              _description_of, _set_description, _description_of),
    Attribute("validityPeriod", ("person", "project", "tag"), _check_period, _period_of,
              lambda item, value: set_json(item, "validityPeriod", value), _read_period),
)


async def _item(context: RequestContext, kind: Kind, item_id: str, argument: str) -> Any:
    item = await get_in_org(context.session, kind.model, context.org_id, item_id, argument,
                            kind.label)
    if isinstance(item, Person):
        guard_administrators(context, [item])
    return item


def _bind(attribute: Attribute, kind: Kind) -> None:
    async def resolve_edit(_root: Any, info: Any, id: str, **kwargs: Any) -> Any:
        context: RequestContext = info.context
        require(context, kind.permission, f"edit a {kind.label}'s {attribute.name}")
        item = await _item(context, kind, id, "id")
        attribute.put(item, attribute.check(kwargs))
        return item

    def resolve_read(item: Any, _info: Any) -> Any:
        return attribute.show(item)

    mutation.set_field(f"edit{kind.name}{attribute.capitalised}", resolve_edit)
    _object(kind).set_field(attribute.name, resolve_read)


_objects: dict[str, ObjectType] = {}


def _object(kind: Kind) -> ObjectType:
    return _objects.setdefault(kind.name, ObjectType(f"Svc{kind.name}"))


for _attribute in ATTRIBUTES:
    for _kind in _attribute.kinds:
        _bind(_attribute, KINDS[_kind])


# -- pasteAttributes ----------------------------------------------------------------------

Copy = Callable[[Any, str, Any, str], None]


def _attribute_copy(attribute: Attribute) -> Copy:
    def copy(source: Any, _source_level: str, target: Any, _target_level: str) -> None:
        attribute.put(target, attribute.get(source))

    return copy


def _copy_color(source: Any, _source_level: str, target: Any, _target_level: str) -> None:
    target.color = source.color


def _group_copy(group: str) -> Copy:
    def copy(source: Any, source_level: str, target: Any, target_level: str) -> None:
        for setting in SETTINGS:
            if setting.group != group or target_level not in setting.levels:
                continue
            found = False
            value = None
            if source_level in setting.levels:
                found, value = reader(setting)(source, source_level)
            if target_level in setting.required and not found:
                continue
            store(target, target_level, setting, value if found else None)

    return copy


@dataclass(frozen=True)
class Pasteable:
    kinds: tuple[str, ...]
    copy: Copy
    settings: bool = False  # an account settings group: the settings permission too


def _pasteables() -> dict[str, Pasteable]:
    found = {a.name: Pasteable(a.kinds, _attribute_copy(a)) for a in ATTRIBUTES}
    found["color"] = Pasteable(tuple(KINDS), _copy_color)
    for group, name in SETTINGS_GROUPS.items():
        levels = {level for s in SETTINGS if s.group == group for level in s.levels}
        found[name] = Pasteable(tuple(k for k in KINDS if k in levels), _group_copy(group),
                                settings=True)
    return found


PASTEABLE = _pasteables()


def _kind_named(value: str, argument: str) -> Kind:
    name = value.strip().lower().removeprefix("svc")
    if name not in KINDS:
        raise BadInput(argument, f"{value!r} is not one of: {', '.join(KINDS)}")
    return KINDS[name]


@mutation.field("pasteAttributes")
async def resolve_paste_attributes(
    _root: Any, info: Any, sourceId: str, sourceType: str, targetId: str, targetType: str,
    attributeTypes: list[str],
) -> bool:
    """Copies the named attributes of the source onto the target (an attribute the source
    lacks is cleared on the target); all or nothing."""
    context: RequestContext = info.context
    source_kind = _kind_named(sourceType, "sourceType")
    target_kind = _kind_named(targetType, "targetType")
    chosen = []
    for name in dict.fromkeys(attributeTypes):
        pasteable = PASTEABLE.get(name)
        if pasteable is None:
            raise BadInput("attributeTypes", f"{name!r} cannot be pasted; one of: "
                           + ", ".join(sorted(PASTEABLE)))
        for kind, argument in ((source_kind, "sourceType"), (target_kind, "targetType")):
            if kind.label not in pasteable.kinds:
                raise BadInput(argument, f"a {kind.label} has no {name!r} to paste")
        chosen.append(pasteable)
    require(context, target_kind.permission, f"edit a {target_kind.label}")
    if any(p.settings for p in chosen):
        require(context, SETTINGS_PERMISSION, "paste settings")
    source = await get_in_org(context.session, source_kind.model, context.org_id, sourceId,
                              "sourceId", source_kind.label)
    target = await _item(context, target_kind, targetId, "targetId")
    if source is target:
        raise BadInput("targetId", "is the source itself")
    for pasteable in chosen:
        pasteable.copy(source, source_kind.label, target, target_kind.label)
    return True


BINDABLES = [mutation, *_objects.values()]
