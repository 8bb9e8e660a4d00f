"""The SDL of the account settings, written from the registry: one `Attribute<Group><Name>`
type per setting, `SvcTimeSettings` and `SvcLocalisation`, the attributes on the entity types
and one `edit<Level><Group><Name>` mutation per setting and level (signatures as the hosted
schema has them). `service/schema/settings.graphql` holds the value types it names."""

from __future__ import annotations

import json
from functools import cache

from service.settings_registry import ATTRIBUTES, LEVELS, SETTINGS, Setting, groups_at, in_group

GROUP_TYPES = {"TimeSettings": "SvcTimeSettings", "Localisation": "SvcLocalisation"}
GROUP_DESCRIPTIONS = {
    "TimeSettings": "Timesheet settings; each value comes from the most specific level that "
                    "sets it (path).",
    "Localisation": "Localisation; each value comes from the most specific level that sets "
                    "it (path).",
}


def entity_type(level: str) -> str:
    return f"Svc{level.capitalize()}"


def _attribute_type(setting: Setting) -> str:
    return (f"type {setting.attribute_type} {{\n  value: {setting.value}\n"
            "  path: [SvcPath]\n}\n")


def _group_type(group: str) -> str:
    fields = "".join(f"  {json.dumps(s.description)}\n  {s.name}: {s.attribute_type}\n"
                     for s in in_group(group))
    return f"{json.dumps(GROUP_DESCRIPTIONS[group])}\ntype {GROUP_TYPES[group]} {{\n{fields}}}\n"


def _mutation(setting: Setting, level: str) -> str:
    own_id = "" if level == "organisation" else "id: SvcId!, "
    return (f"  {json.dumps(setting.description)}\n"
            f"  {setting.mutation(level)}({own_id}{setting.name}: {setting.argument}): "
            f"{entity_type(level)}!\n")


@cache
def settings_sdl() -> str:
    parts = [_attribute_type(s) for s in SETTINGS]
    parts += [_group_type(group) for group in ATTRIBUTES]
    for level in LEVELS:
        fields = "".join(f"  {ATTRIBUTES[g]}: {GROUP_TYPES[g]}!\n" for g in groups_at(level))
        parts.append(f"extend type {entity_type(level)} {{\n{fields}}}\n")
    mutations = "".join(_mutation(s, level) for s in SETTINGS for level in s.levels)
    parts.append(f"extend type Mutation {{\n{mutations}}}\n")
    return "\n".join(parts)
