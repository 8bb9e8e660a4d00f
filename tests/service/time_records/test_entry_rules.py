"""The entry rules of the time settings (service/time_records/entry_settings.py) through POST
/graphql:
`noFutureTimeRecord`, `minimumTimeEntry`, `timeEntryUnit`, `allowTimeOffRecord` and
`absenceMaxOneDay`, set at the organisation's and at the person's level, on addTimeRecord,
the edits of start, end, duration and absence, and cloneTimeRecords. Each refusal names the
setting, where it is set, and what would be accepted."""

from __future__ import annotations

from typing import Any

import pytest

from tests.service.access_support import absence_type
from tests.support import DAY_MS, HOUR_MS, Member, Org

MONDAY = 1_773_619_200_000  # 2026-03-16T00:00:00Z, a Monday
NOW = MONDAY + 2 * DAY_MS + 12 * HOUR_MS  # the test clock: Wednesday noon
MINUTE = 60_000
ADD = ("mutation($p: SvcId!, $s: SvcTimestamp!, $d: Int!, $a: SvcId) { addTimeRecord("
       "personId: $p, startTime: $s, duration: $d, absenceId: $a) { id duration } }")


def _setter(level: str, name: str, kind: str) -> str:
    field = name[0].upper() + name[1:]
    if level == "organisation":
        return (f"mutation($v: {kind}) {{ editOrganisationTimeSettings{field}("
                f"{name}: $v) {{ id }} }}")
    return (f"mutation($v: {kind}, $id: SvcId!) {{ editPersonTimeSettings{field}(id: $id, "
            f"{name}: $v) {{ id }} }}")


async def _set(org: Org, level: str, who: Member, name: str, kind: str, value: Any) -> None:
    variables = {"v": value} if level == "organisation" else {"v": value, "id": who.id}
    await org.admin.gql(_setter(level, name, kind), variables)


# (setting, its GraphQL type, the value set, the refused entry, the accepted entry, the
# refusal's words before and after "(<setting> of <where>): "); an entry is (start,
# duration, absence?).
RULES = [
    ("noFutureTimeRecord", "Boolean", True, (NOW + HOUR_MS, HOUR_MS, False),
     (NOW - HOUR_MS, HOUR_MS, False),
     ("refuse time in the future", "the entry must start at or before now, 2026-03-18 12:00 UTC")),
    ("minimumTimeEntry", "Int", 15 * MINUTE, (MONDAY, 10 * MINUTE, False),
     (MONDAY, 15 * MINUTE, False),
     ("refuse entries shorter than 15 min", "record at least 15 min")),
    ("allowTimeOffRecord", "Boolean", False, (MONDAY, HOUR_MS, True), (MONDAY, HOUR_MS, False),
     ("do not allow recording time off", "record worked time only")),
    ("absenceMaxOneDay", "Boolean", True, (MONDAY, 25 * HOUR_MS, True),
     (MONDAY, 8 * HOUR_MS, True),
     ("allow an absence of at most one day", "record at most 24 h, one record per day")),
]


@pytest.mark.parametrize("level", ["organisation", "person"])
async def test_each_rule_refuses_the_wrong_entry_and_accepts_the_right(org: Org,
                                                                       level: str) -> None:
    org.live.clock.set(NOW)
    bob = await org.add_member("Bob")
    leave = await absence_type(org, "Leave")
    where = "person Bob" if level == "person" else "organisation "
    for name, kind, value, wrong, right, (refusal, accepted) in RULES:
        def add(entry: tuple[int, int, bool]) -> dict[str, Any]:
            start, duration, absent = entry
            return {"p": bob.id, "s": start, "d": duration, "a": leave if absent else None}

        assert await bob.gql(ADD, add(wrong)), name  # off by default
        await _set(org, level, bob, name, kind, value)
        message = await bob.gql.error(ADD, add(wrong))
        assert f"{refusal} ({name} of {where}" in message, (name, message)
        assert f"): {accepted}" in message, (name, message)
        assert await bob.gql(ADD, add(right)), name
        await _set(org, level, bob, name, kind, None)


@pytest.mark.parametrize("level", ["organisation", "person"])
async def test_durations_are_rounded_up_to_the_unit(org: Org, level: str) -> None:
    bob = await org.add_member("Bob")
    await _set(org, level, bob, "timeEntryUnit", "Int", 15 * MINUTE)
    for given, stored in [(10 * MINUTE, 15 * MINUTE), (30 * MINUTE, 30 * MINUTE),
                          (31 * MINUTE, 45 * MINUTE), (0, 0)]:
        added = await bob.gql(ADD, {"p": bob.id, "s": MONDAY, "d": given})
        assert added["addTimeRecord"]["duration"] == stored, given
    record = added["addTimeRecord"]["id"]
    edited = await bob.gql("mutation($id: SvcId!) { editTimeRecordDuration(id: $id, "
                           f"duration: {61 * MINUTE}) {{ duration }} }}", {"id": record})
    assert edited["editTimeRecordDuration"]["duration"] == 75 * MINUTE


async def test_an_admin_may_not_record_the_future_either(org: Org) -> None:
    org.live.clock.set(NOW)
    await _set(org, "organisation", org.admin, "noFutureTimeRecord", "Boolean", True)
    message = await org.admin.gql.error(ADD, {"p": org.admin.id, "s": NOW + DAY_MS,
                                              "d": HOUR_MS})
    assert "(noFutureTimeRecord of organisation " in message


EDIT = "mutation($id: SvcId!, $v: {kind}) {{ {field}(id: $id, {arg}: $v) {{ id }} }}"


async def test_edits_and_clones_are_held_to_the_rules(org: Org) -> None:
    org.live.clock.set(NOW)
    bob = await org.add_member("Bob")
    leave = await absence_type(org, "Leave")
    worked = (await bob.gql(ADD, {"p": bob.id, "s": MONDAY + 9 * HOUR_MS, "d": HOUR_MS}))[
        "addTimeRecord"]["id"]
    for name, kind, setting_value in [("noFutureTimeRecord", "Boolean", True),
                              ("minimumTimeEntry", "Int", 15 * MINUTE),
                              ("allowTimeOffRecord", "Boolean", False),
                              ("absenceMaxOneDay", "Boolean", True)]:
        await _set(org, "organisation", bob, name, kind, setting_value)
    # An absence record made before time off was turned off.
    await _set(org, "organisation", bob, "allowTimeOffRecord", "Boolean", None)
    absent = (await bob.gql(ADD, {"p": bob.id, "s": MONDAY, "d": 8 * HOUR_MS, "a": leave}))[
        "addTimeRecord"]["id"]
    await _set(org, "organisation", bob, "allowTimeOffRecord", "Boolean", False)
    refusals: list[tuple[str, str, str, str, Any, str]] = [
        ("editTimeRecordStartTime", "startTime", "SvcTimestamp", worked, NOW + DAY_MS,
         "noFutureTimeRecord"),
        ("editTimeRecordDuration", "duration", "Int!", worked, 5 * MINUTE, "minimumTimeEntry"),
        ("editTimeRecordAbsence", "absenceId", "SvcId!", worked, leave, "allowTimeOffRecord"),
        ("editTimeRecordEndTime", "endTime", "SvcTimestamp", absent, MONDAY + 2 * DAY_MS,
         "allowTimeOffRecord"),
    ]
    for field, arg, kind, record, value, setting in refusals:
        query = EDIT.format(field=field, arg=arg, kind=kind)
        message = await bob.gql.error(query, {"id": record, "v": value})
        assert f"({setting} of organisation " in message, (field, message)
    await _set(org, "organisation", bob, "allowTimeOffRecord", "Boolean", None)
    message = await bob.gql.error(EDIT.format(field="editTimeRecordEndTime", arg="endTime",
                                              kind="SvcTimestamp"),
                                  {"id": absent, "v": MONDAY + 2 * DAY_MS})
    assert "(absenceMaxOneDay of organisation " in message
    # The right edits pass.
    for field, arg, kind, record, value in [
        ("editTimeRecordStartTime", "startTime", "SvcTimestamp", worked, NOW - HOUR_MS),
        ("editTimeRecordDuration", "duration", "Int!", worked, 15 * MINUTE),
        ("editTimeRecordEndTime", "endTime", "SvcTimestamp", absent, MONDAY + 20 * HOUR_MS),
    ]:
        assert await bob.gql(EDIT.format(field=field, arg=arg, kind=kind),
                             {"id": record, "v": value}), field
    # Cloning Monday onto Thursday (the future) is refused and copies nothing.
    clone = ("mutation($p: SvcId!, $a: SvcTimestamp!, $b: SvcTimestamp!, $c: SvcTimestamp!,"
             " $d: SvcTimestamp!) { cloneTimeRecords(personId: $p, sourceStartTime: $a,"
             " sourceEndTime: $b, targetStartTime: $c, targetEndTime: $d) { id } }")
    week = {"p": bob.id, "a": MONDAY, "b": MONDAY + DAY_MS}
    message = await bob.gql.error(clone, {**week, "c": MONDAY + 3 * DAY_MS,
                                          "d": MONDAY + 4 * DAY_MS})
    assert "(noFutureTimeRecord of organisation " in message
    count = "query($p: SvcId!) { countTimeRecords(filter: [{personId: $p}]) }"
    assert (await bob.gql(count, {"p": bob.id}))["countTimeRecords"] == 2
    cloned = await bob.gql(clone, {**week, "c": MONDAY - 7 * DAY_MS, "d": MONDAY - 6 * DAY_MS})
    assert len(cloned["cloneTimeRecords"]) == 1  # Monday's absence (the worked hour moved)
