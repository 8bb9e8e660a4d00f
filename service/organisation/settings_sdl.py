"""The SDL of the account settings, written from the registry: one `Attribute<Group><Name>`
type per setting, `SvcTimeSettings` and `SvcLocalisation`, the attributes on the entity types
and one `edit<Level><Group><Name>` mutation per setting and level (signatures as the hosted
schema has them). `service/organisation/settings.graphql` holds the value types it names."""

from __future__ import annotations

import json
from functools import cache

from service.organisation.settings_registry import (
    ATTRIBUTES,
    DIRECT,
    LEVELS,
    SETTINGS,
    Setting,
    groups_at,
    in_group,
)

GROUP_TYPES = {"TimeSettings": "SvcTimeSettings", "Localisation": "SvcLocalisation",
               "EmailTemplate": "SvcEmailTemplates"}
GROUP_DESCRIPTIONS = {
    "EmailTemplate": "The e-mail templates; each comes from the most specific level that sets "
                     "it (path); unset everywhere, the built-in mail is sent.",
    "TimeSettings": "Timesheet settings; each value comes from the most specific level that "
                    "sets it (path).",
    "Localisation": "Localisation; each value comes from the most specific level that sets "
                    "it (path).",
}


def entity_type(level: str) -> str:
    return f"Svc{level.capitalize()}"


def _attribute_types(setting: Setting) -> list[str]:
    names = dict.fromkeys(setting.attribute_type_at(level) for level in (
        setting.levels if setting.group in DIRECT else ("organisation",)))
    return [f"type {name} {{\n  value: {setting.value}\n  path: [SvcPath]\n}}\n"
            for name in names]


def _entity_field(level: str, group: str) -> str:
    if group in DIRECT:
        (setting,) = in_group(group)
        return f"  {ATTRIBUTES[group]}: {setting.attribute_type_at(level)}\n"
    return f"  {ATTRIBUTES[group]}: {GROUP_TYPES[group]}!\n"


def _group_type(group: str) -> str:
    fields = "".join(f"  {json.dumps(s.description)}\n  {s.name}: {s.attribute_type}\n"
                     for s in in_group(group))
    return f"{json.dumps(GROUP_DESCRIPTIONS[group])}\ntype {GROUP_TYPES[group]} {{\n{fields}}}\n"


def _mutation(setting: Setting, level: str) -> str:
    own_id = "" if level == "organisation" else "id: SvcId!, "
    return (f"  {json.dumps(setting.description)}\n"
            f"  {setting.mutation(level)}({own_id}{setting.argument_name}: {setting.argument}): "
            f"{entity_type(level)}!\n")


@cache
def settings_sdl() -> str:
    parts = [text for s in SETTINGS for text in _attribute_types(s)]
    parts += [_group_type(group) for group in ATTRIBUTES if group not in DIRECT]
    for level in LEVELS:
        fields = "".join(_entity_field(level, g) for g in groups_at(level))
        parts.append(f"extend type {entity_type(level)} {{\n{fields}}}\n")
    mutations = "".join(_mutation(s, level) for s in SETTINGS for level in s.levels)
    parts.append(f"extend type Mutation {{\n{mutations}}}\n")
    return "\n".join(parts)
