"""Every row of the settings registry through POST /graphql: set at each of its levels by an
admin, read back with its `path` at the person (person > tag > account) and at the project,
refused to a non-admin, refused with an invalid value naming the argument, and audited.

Table-driven because the registry is a table: a row added there is tested here once it has
its sample values below (a test says when one is missing)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from plumbing.mail_templates import KINDS
from service.organisation.settings_registry import (
    ATTRIBUTES,
    CATEGORIES,
    DIRECT,
    EMAIL_TEMPLATE,
    SETTINGS,
    Setting,
)
from tests.support import Member, Org

LOCK = 1_767_225_600_000  # 2026-01-01


# Four valid values (account, tag, person, project: each differs from the one before) and an
# invalid one (None: the GraphQL type admits no invalid value). "$pc0" … name entities made
# in the organisation (project categories, task categories, a task status).
SAMPLES: dict[str, tuple[list[Any], Any]] = {
    "listOfProjectCategories": ([[["$pc0"]], [["$pc1"], ["$pc0"]], [["$pc0", "$pc1"]], [[]]],
                                [["0123456789abcdef01234567"]]),
    "taskCategories": ([["$tc0"], ["$tc1"], ["$tc0", "$tc1"], []], ["$tc0", None]),
    "periodicity": (["monthly", "daily", "biWeekly", "semiMonthly"], "quarterly"),
    "timeEntryUnit": ([900_000, 60_000, 300_000, 0], -1),
    "turnOffPeriodAfter": ([30, 7, 0, 90], 3651),
    "minimumTimeEntry": ([60_000, 0, 1_800_000, 86_400_000], 86_400_001),
    "durationFormat": ([1, 2, 0, 1], 7),
    "lockDate": ([LOCK, LOCK + 86_400_000, LOCK - 86_400_000, LOCK + 1000], None),
    "timesheetReminder": ([{"timing": "nextStart", "hour": 9},
                           {"timing": "currentEnd", "hour": 17},
                           {"timing": "nextStart", "hour": 0},
                           {"timing": "currentEnd", "hour": 23}],
                          {"timing": "nextStart", "hour": 24}),
    "approvalReminder": ([3, 0, 365, 14], 366),
    "autoTimesheet": ([[{"categoryId": "$tc0"}], [{"categoryId": "$tc1",
                                                   "timesheetStartStatusId": "$st0"}],
                       [], [{"categoryId": "$tc0", "timesheetEndStatusId": "$st0"}]],
                      [{"categoryId": "$pc0"}]),
    "autoSubmit": ([2, 0, 7, 1], -1),
    "approvalEscalationDelay": ([2, 0, 30, 1], 31),
    "currency": (["CHF", "USD", "GBP", "JPY"], None),
    "dateFormat": (["DD/MM/YYYY", "MM/DD/YYYY", "DD.MM.YYYY", "YYYY-MM-DD"], "YYYY/DD/MM"),
    "decimalFormat": ([",", ".", ",", "."], ";"),
    "thousandSeparator": ([".", " ", "'", ""], "_"),
    "firstDayOfWeek": ([0, 6, 3, 1], 7),
    "timeFormat": ([12, 24, 12, 24], 13),
    "timeZone": (["Europe/Berlin", "Asia/Tokyo", "America/New_York", "UTC"], None),
    "notificationSettings": ([
        {"email": False, **{c: {"frequency": "daily", "hour": 8} for c in CATEGORIES}},
        {"push": False, **{c: {"frequency": "none"} for c in CATEGORIES}},
        {"email": True, "push": False, **{c: {"frequency": "weekly", "dayOfWeek": "monday"}
                                          for c in CATEGORIES}},
        {**{c: {"frequency": "instant"} for c in CATEGORIES}}],
        {**{c: {"frequency": "hourly"} for c in CATEGORIES}}),
}
# The e-mail templates (their names are the kinds, one of which a time setting shares).
TEMPLATE_SAMPLES = ([["Subject: {{ person.name }}\n\nHello {{ person.name }}",
                      "{{ person.name }}", "Dear {{ person.name|upper }}", "Hi"],
                     "Hi\n{% if %}"])
MENTIONS = "{ frequency hour dayOfWeek threshold atRisk overBudget }"


def _notifications_shown(value: dict[str, Any]) -> dict[str, Any]:
    keys = ("frequency", "hour", "dayOfWeek", "threshold", "atRisk", "overBudget")
    full = {"email": True, "push": True, **value}
    return {k: ({f: full[k].get(f) for f in keys} if k in CATEGORIES else full[k])
            for k in ("email", "push", *CATEGORIES)}
BOOLEAN = ([True, False, True, False], None)
# How each value type is selected and how a stored value is shown.
SHOWN: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "[[SvcProjectCategory]]": (" { id }", lambda v: [[{"id": i} for i in row] for row in v]),
    "[SvcTaskCategory]": (" { id }", lambda v: [{"id": i} for i in v]),
    "SvcTime": (" { ts }", lambda v: {"ts": v}),
    "SvcTimesheetReminder": (" { timing hour }", lambda v: v),
    "SvcNotificationSettings!": (" { email push " + " ".join(
        f"{c} {MENTIONS}" for c in CATEGORIES) + " }", _notifications_shown),
    "[SvcAutoTimesheetEntry]": (" { categoryId timesheetStartStatusId category { id } }",
                                lambda v: [{"categoryId": e["categoryId"],
                                            "timesheetStartStatusId":
                                                e.get("timesheetStartStatusId"),
                                            "category": {"id": e["categoryId"]}} for e in v]),
}
ENTITY_QUERY = {"person": "getPerson", "project": "getProject", "tag": "getTag"}
ATTRIBUTE = ATTRIBUTES


def samples(setting: Setting) -> tuple[list[Any], Any]:
    if setting.argument == "Boolean":
        return BOOLEAN
    if setting.group == EMAIL_TEMPLATE:
        assert setting.name in KINDS
        return TEMPLATE_SAMPLES
    assert setting.name in SAMPLES, f"no sample values for the setting {setting.name}"
    return SAMPLES[setting.name]


def substituted(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, str) and value.startswith("$"):
        return ids[value[1:]]
    if isinstance(value, list):
        return [substituted(v, ids) for v in value]
    if isinstance(value, dict):
        return {k: substituted(v, ids) for k, v in value.items()}
    return value


def shown(setting: Setting, value: Any) -> Any:
    if value is None or setting.value not in SHOWN:
        return value
    return SHOWN[setting.value][1](value)


def edit(setting: Setting, level: str) -> str:
    own_id = "$id: SvcId!, " if level != "organisation" else ""
    id_argument = "id: $id, " if level != "organisation" else ""
    return (f"mutation({own_id}$v: {setting.argument}) {{ {setting.mutation(level)}("
            f"{id_argument}{setting.argument_name}: $v) {{ id }} }}")


def read(setting: Setting, level: str) -> str:
    selection = SHOWN.get(setting.value, ("", None))[0]
    inner = f"{{ value{selection} path {{ id collection }} }}"
    attribute = (f"{ATTRIBUTE[setting.group]} {inner}" if setting.group in DIRECT
                 else f"{ATTRIBUTE[setting.group]} {{ {setting.name} {inner} }}")
    if level == "organisation":
        return f"{{ currentOrganisation {{ {attribute} }} }}"
    return f"query($id: SvcId!) {{ {ENTITY_QUERY[level]}(id: $id) {{ {attribute} }} }}"


async def setup(org: Org) -> tuple[Member, dict[str, str]]:
    bob = await org.add_member("Bob")
    made = await org.admin.gql(
        'mutation { tag: addTag(name: "Night shift") { id } project: addProject(name: "Apollo")'
        ' { id } pc0: addProjectCategory(name: "Client") { id }'
        ' pc1: addProjectCategory(name: "Internal") { id }'
        ' tc0: addTaskCategory(name: "Board") { id statuses { id } }'
        ' tc1: addTaskCategory(name: "Backlog") { id } }')
    ids = {key: value["id"] for key, value in made.items()}
    ids.update(person=bob.id, organisation=org.id, st0=made["tc0"]["statuses"][0]["id"])
    await org.admin.gql("mutation($t: SvcId!, $p: SvcId!) { tagPerson(tagId: $t, personId: $p)"
                        " { id } }", {"t": ids["tag"], "p": bob.id})
    return bob, ids


async def attribute(org: Org, setting: Setting, level: str, ids: dict[str, str]) -> Any:
    data = await org.admin.gql(read(setting, level), {} if level == "organisation"
                               else {"id": ids[level]})
    entity = next(iter(data.values()))
    found = entity[ATTRIBUTE[setting.group]]
    return found if setting.group in DIRECT else found[setting.name]


def expected(setting: Setting, value: Any, level: str | None, ids: dict[str, str]) -> Any:
    collection = {"organisation": "organisations", "tag": "tags", "person": "persons",
                  "project": "projects"}
    path = [] if level is None else [{"id": ids[level], "collection": collection[level]}]
    return {"value": shown(setting, value), "path": path}


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: f"{s.group}.{s.name}")
async def test_each_setting_at_each_level(org: Org, setting: Setting) -> None:
    bob, ids = await setup(org)
    carol = await org.add_member("Carol")
    valid, invalid = samples(setting)
    values = dict(zip(("organisation", "tag", "person", "project"),
                      (substituted(v, ids) for v in valid), strict=True))
    variables = {level: {"v": values[level]} | ({} if level == "organisation"
                                                else {"id": ids[level]})
                 for level in setting.levels}

    # A non-admin may not change it (at person level only their own, when the row allows).
    for level in setting.levels:
        others = variables[level] | ({"id": carol.id} if level == "person" else {})
        assert await bob.gql.denied(edit(setting, level), others) == [
            f"Mutation.{setting.mutation(level)}"]
    if setting.self_edit:
        await bob.gql(edit(setting, "person"), variables["person"])
        await org.admin.gql(edit(setting, "person"), {"id": bob.id, "v": None})

    # The most specific level that sets it wins; the path names it.
    person_levels = [level for level in ("organisation", "tag", "person")
                     if level in setting.levels]
    if "organisation" not in setting.required:
        assert await attribute(org, setting, "person", ids) == expected(
            setting, setting.default, None, ids)
    for level in person_levels:
        await org.admin.gql(edit(setting, level), variables[level])
        assert await attribute(org, setting, "person", ids) == expected(
            setting, values[level], level, ids), level
        assert await attribute(org, setting, level, ids) == expected(
            setting, values[level], level, ids)
    assert await attribute(org, setting, "tag", ids) == expected(
        setting, values["tag"], "tag", ids)
    # Cleared at person level, the tag's applies again.
    await org.admin.gql(edit(setting, "person"), {"id": bob.id, "v": None})
    assert await attribute(org, setting, "person", ids) == expected(
        setting, values["tag"], "tag", ids)
    if "project" in setting.levels:
        assert await attribute(org, setting, "project", ids) == expected(setting, None, None, ids)
        await org.admin.gql(edit(setting, "project"), variables["project"])
        assert await attribute(org, setting, "project", ids) == expected(
            setting, values["project"], "project", ids)

    # An invalid value is refused naming the argument, and nothing is written.
    if invalid is None:
        assert setting.argument in ("Boolean", "SvcTimestamp", "SvcCurrency", "SvcTimeZone"), (
            f"{setting.name} needs an invalid sample")
    else:
        message = await org.admin.gql.error(edit(setting, "organisation"),
                                            {"v": substituted(invalid, ids)})
        assert message.startswith(f'Invalid argument "{setting.argument_name}'), message
        assert await attribute(org, setting, "organisation", ids) == expected(
            setting, values["organisation"], "organisation", ids)

    # Every change is in the audit trail, with its arguments.
    trail = await org.admin.gql(
        "query($o: [String]) { getAuditTrails(operations: $o) { operationName arguments"
        " { name value } } }", {"o": [setting.mutation(level) for level in setting.levels]})
    entries = trail["getAuditTrails"]
    assert {e["operationName"] for e in entries} == {setting.mutation(level)
                                                     for level in setting.levels}
    organisation_entry = next(e for e in entries
                              if e["operationName"] == setting.mutation("organisation"))
    assert [a["name"] for a in organisation_entry["arguments"]] == [setting.argument_name]
    submitted = values["organisation"]
    assert organisation_entry["arguments"][0]["value"] == (
        submitted if isinstance(submitted, str) else json.dumps(submitted))


async def test_ties_between_tags(org: Org) -> None:
    """Two tags of the same depth: the first by name wins, except for the plannings, whose
    lists are taken together; a deeper tag beats both."""
    bob, ids = await setup(org)
    made = await org.admin.gql(
        'mutation($p: SvcId!) { a: addTag(name: "Alpha") { id } deep: addTag(name: "Zulu",'
        " parentId: $p) { id } }", {"p": ids["tag"]})
    alpha, deep = made["a"]["id"], made["deep"]["id"]
    await org.admin.gql("mutation($t: SvcId!, $p: SvcId!) { tagPerson(tagId: $t, personId: $p)"
                        " { id } }", {"t": alpha, "p": bob.id})
    for tag, days, categories in ((ids["tag"], 5, [ids["tc0"]]), (alpha, 9, [ids["tc1"]])):
        await org.admin.gql(
            "mutation($id: SvcId!, $d: Int, $c: [SvcId]) {"
            " editTagTimeSettingsApprovalReminder(id: $id, approvalReminder: $d) { id }"
            " editTagTimeSettingsTaskCategories(id: $id, taskCategories: $c) { id } }",
            {"id": tag, "d": days, "c": categories})
    query = ("query($id: SvcId!) { getPerson(id: $id) { timeSettings {"
             " approvalReminder { value path { id } } taskCategories { value { id }"
             " path { id } } } } }")
    shown_ = (await org.admin.gql(query, {"id": bob.id}))["getPerson"]["timeSettings"]
    assert shown_["approvalReminder"] == {"value": 9, "path": [{"id": alpha}]}
    assert shown_["taskCategories"] == {
        "value": [{"id": ids["tc1"]}, {"id": ids["tc0"]}],
        "path": [{"id": alpha}, {"id": ids["tag"]}]}
    await org.admin.gql("mutation($t: SvcId!, $p: SvcId!) { tagPerson(tagId: $t, personId: $p)"
                        " { id } editTagTimeSettingsApprovalReminder(id: $t,"
                        " approvalReminder: 1) { id } }", {"t": deep, "p": bob.id})
    shown_ = (await org.admin.gql(query, {"id": bob.id}))["getPerson"]["timeSettings"]
    assert shown_["approvalReminder"] == {"value": 1, "path": [{"id": deep}]}


async def test_the_account_time_zone_cannot_be_cleared(org: Org) -> None:
    message = await org.admin.gql.error(
        "mutation { editOrganisationLocalisationTimeZone(timeZone: null) { id } }")
    assert message == 'Invalid argument "timeZone": the organisation needs a time zone'
