"""The entry rules of issue #24 that the rule table (service/time_records/entry_rules.py) added,
through
POST /graphql and the legacy interface, as the right and the wrong role: `lockDate` spares
only an admin (adding, editing, deleting, legacy entries; a submission records nothing),
`timeRecordOnWorkingDayOnly` (the schedules of part 3), `enableStartEndTime` /
`mandatoryStartEndTime`, `enableTimer` / `mandatoryTimer` (a running timer is a worked record
of duration 0 without an end; giving it its end stops it) and `listOfProjectCategories`. Each
refusal names the setting, where it is set and what would be accepted."""

from __future__ import annotations

from typing import Any

from tests.service.legacy.test_legacy import legacy_for
from tests.service.test_approvals_support import SUBMIT, WEEK, WEEK_END
from tests.support import DAY_MS, HOUR_MS, Member, Org

SATURDAY = WEEK + 5 * DAY_MS
ADD = ("mutation($p: SvcId!, $s: SvcTimestamp!, $d: Int!, $e: SvcTimestamp, $a: SvcId,"
       " $pr: [SvcId]) { addTimeRecord(personId: $p, startTime: $s, duration: $d,"
       " endTime: $e, absenceId: $a, projectIds: $pr) { id duration endTime { ts } } }")
EDIT = "mutation($id: SvcId!, $v: {kind}) {{ {field}(id: $id, {arg}: $v) {{ id duration }} }}"
START = EDIT.format(field="editTimeRecordStartTime", arg="startTime", kind="SvcTimestamp")
END = EDIT.format(field="editTimeRecordEndTime", arg="endTime", kind="SvcTimestamp")
DURATION = EDIT.format(field="editTimeRecordDuration", arg="duration", kind="Int!")
WFH = EDIT.format(field="editTimeRecordWfh", arg="wfh", kind="Boolean!")
PROJECTS = EDIT.format(field="editTimeRecordProjects", arg="projectIds", kind="[SvcId]!")
DELETE = "mutation($ids: [SvcId!]!) { deleteTimeRecords(ids: $ids) { id } }"
CLONE = ("mutation($p: SvcId!, $a: SvcTimestamp!, $b: SvcTimestamp!, $c: SvcTimestamp!,"
         " $d: SvcTimestamp!) { cloneTimeRecords(personId: $p, sourceStartTime: $a,"
         " sourceEndTime: $b, targetStartTime: $c, targetEndTime: $d) { id } }")


async def setting(org: Org, name: str, kind: str, value: Any, person: Member | None = None
                  ) -> None:
    field = name[0].upper() + name[1:]
    if person is None:
        await org.admin.gql(f"mutation($v: {kind}) {{ editOrganisationTimeSettings{field}("
                            f"{name}: $v) {{ id }} }}", {"v": value})
    else:
        await org.admin.gql(f"mutation($v: {kind}, $id: SvcId!) {{ editPersonTimeSettings"
                            f"{field}(id: $id, {name}: $v) {{ id }} }}",
                            {"v": value, "id": person.id})


def entry(who: Member, start: int, duration: int = HOUR_MS, **more: Any) -> dict[str, Any]:
    return {"p": who.id, "s": start, "d": duration, **more}


async def added(by: Member, variables: dict[str, Any]) -> dict[str, Any]:
    record: dict[str, Any] = (await by.gql(ADD, variables))["addTimeRecord"]
    return record


async def test_lock_date_spares_only_an_admin(org: Org) -> None:
    bob = await org.add_member("Bob")
    tuesday, thursday = WEEK + DAY_MS + 9 * HOUR_MS, WEEK + 3 * DAY_MS + 9 * HOUR_MS
    early = await added(bob, entry(bob, tuesday))
    await setting(org, "lockDate", "SvcTimestamp", WEEK + 2 * DAY_MS)
    lock = "lock time before 2026-03-04 00:00 UTC (lockDate of organisation "
    accepted = "): nothing before it may be recorded or changed except by an admin"
    # The member: neither a new entry, nor an edit, a move, a deletion there.
    for query, variables in [(ADD, entry(bob, tuesday)), (WFH, {"id": early["id"], "v": True}),
                             (DELETE, {"ids": [early["id"]]})]:
        message = await bob.gql.error(query, variables)
        assert lock in message and accepted in message, message
    late = await added(bob, entry(bob, thursday))
    assert lock in await bob.gql.error(START, {"id": late["id"], "v": tuesday})
    # The admin may do all of it.
    assert await org.admin.gql(ADD, entry(bob, tuesday))
    assert await org.admin.gql(WFH, {"id": early["id"], "v": True})
    assert await org.admin.gql(START, {"id": late["id"], "v": tuesday + HOUR_MS})
    # Submitting records nothing: a period that holds locked time is still submitted (a
    # person who forgot to submit before the lock can), and its time stays locked.
    assert await bob.gql(SUBMIT, {"p": bob.id, "s": WEEK, "e": WEEK_END})
    # The legacy interface's time entries hold to the same rule.
    as_bob, as_admin = await legacy_for(org, bob), await legacy_for(org, org.admin)
    legacy_entry = {"start": "2026-03-03 09:00:00", "duration": 3600,
                    "person": {"id": bob.id}}
    message = await as_bob.error("time_entry.create", time_entry=legacy_entry)
    assert lock in message, message
    await as_admin.ok("time_entry.create", time_entry=legacy_entry)
    await as_bob.ok("time_entry.create", time_entry={**legacy_entry,
                                                     "start": "2026-03-10 09:00:00"})


async def test_time_only_on_working_days(org: Org) -> None:
    bob = await org.add_member("Bob")
    monday = await added(bob, entry(bob, WEEK + 9 * HOUR_MS))
    await setting(org, "timeRecordOnWorkingDayOnly", "Boolean", True, person=bob)
    refusal = ("allow time on working days only (timeRecordOnWorkingDayOnly of person Bob): "
               "2026-03-07 is not a working day for this person; record on a day with "
               "scheduled time")
    # Neither bob nor the admin for him (the rule spares no one): adding, moving, cloning.
    for who in (bob, org.admin):
        assert refusal in await who.gql.error(ADD, entry(bob, SATURDAY + 9 * HOUR_MS))
        assert refusal in await who.gql.error(START, {"id": monday["id"],
                                                      "v": SATURDAY + 9 * HOUR_MS})
    assert refusal in await bob.gql.error(CLONE, {"p": bob.id, "a": WEEK, "b": WEEK + DAY_MS,
                                                  "c": SATURDAY, "d": SATURDAY + DAY_MS})
    assert await bob.gql(ADD, entry(bob, WEEK + DAY_MS + 9 * HOUR_MS))
    # Others are not held to bob's setting.
    carol = await org.add_member("Carol")
    assert await carol.gql(ADD, entry(carol, SATURDAY + 9 * HOUR_MS))
    # allowTimeRecordOutOfScheduleDaily now also holds moves, not only new entries.
    await setting(org, "allowTimeRecordOutOfScheduleDaily", "Boolean", False, person=carol)
    worked = await added(org.admin, entry(carol, WEEK + 9 * HOUR_MS))
    message = await carol.gql.error(START, {"id": worked["id"], "v": SATURDAY + DAY_MS})
    assert "(allowTimeRecordOutOfScheduleDaily): record on a day with scheduled" in message


async def test_start_and_end_times(org: Org) -> None:
    bob = await org.add_member("Bob")
    at = WEEK + 9 * HOUR_MS
    kept = await added(bob, entry(bob, at))  # no end, made before the settings
    await setting(org, "enableStartEndTime", "Boolean", False, person=bob)
    off = ("do not offer start and end times (enableStartEndTime of person Bob): record a "
           "duration without an end time")
    assert off in await bob.gql.error(ADD, entry(bob, at, e=at + HOUR_MS))
    assert off in await bob.gql.error(END, {"id": kept["id"], "v": at + HOUR_MS})
    plain = await added(bob, entry(bob, at))
    await setting(org, "enableStartEndTime", "Boolean", None, person=bob)
    await setting(org, "mandatoryStartEndTime", "Boolean", True)
    needed = ("require a start and an end time on every time record (mandatoryStartEndTime "
              "of organisation ")
    for who in (bob, org.admin):
        message = await who.gql.error(ADD, entry(bob, at))
        assert needed in message and message.endswith(": give the entry its end time")
    with_end = await added(bob, entry(bob, at, e=at + HOUR_MS))
    assert needed in await bob.gql.error(END, {"id": with_end["id"], "v": None})
    timer = await added(bob, entry(bob, at, 0))  # a running timer needs no end yet
    # Submitting the week: the record made before the setting still lacks its end.
    assert needed in await bob.gql.error(SUBMIT, {"p": bob.id, "s": WEEK, "e": WEEK_END})
    for record in (kept, plain, timer):
        await bob.gql(END, {"id": record["id"], "v": at + 2 * HOUR_MS})
    assert await bob.gql(SUBMIT, {"p": bob.id, "s": WEEK, "e": WEEK_END})


async def test_the_timer(org: Org) -> None:
    bob, carol = await org.add_member("Bob"), await org.add_member("Carol")
    at = WEEK + 9 * HOUR_MS
    await setting(org, "enableTimer", "Boolean", False, person=carol)
    message = await carol.gql.error(ADD, entry(carol, at, 0))
    assert message.endswith("(enableTimer of person Carol): record a duration (or an end "
                            "time) instead of starting a timer")
    assert await carol.gql(ADD, entry(carol, at))
    await setting(org, "mandatoryTimer", "Boolean", True, person=bob)
    only = ("record time with the timer only (mandatoryTimer of person Bob): start a timer "
            "(an entry of duration 0 without an end) and stop it by giving it its end time")
    for who in (bob, org.admin):
        assert only in await who.gql.error(ADD, entry(bob, at))
        assert only in await who.gql.error(ADD, entry(bob, at, 0, e=at + HOUR_MS))
    await setting(org, "timeEntryUnit", "Int", 15 * 60_000)
    running = await added(bob, entry(bob, at, 0))
    assert running["duration"] == 0 and running["endTime"] is None
    stopped = await bob.gql(END, {"id": running["id"], "v": at + 70 * 60_000})
    assert stopped["editTimeRecordEndTime"]["duration"] == 75 * 60_000  # rounded up
    assert only in await bob.gql.error(DURATION, {"id": running["id"], "v": HOUR_MS})
    assert only in await bob.gql.error(END, {"id": running["id"], "v": at + HOUR_MS})
    # Time off is not timed; carol (timer off) is not held to bob's mandatory timer.
    leave = (await org.admin.gql('mutation { addAbsenceType(name: "Leave") { id } }'))[
        "addAbsenceType"]["id"]
    assert await bob.gql(ADD, entry(bob, at + DAY_MS, 8 * HOUR_MS, a=leave))
    assert await carol.gql(DURATION, {"id": (await added(carol, entry(carol, at)))["id"],
                                      "v": 2 * HOUR_MS})


async def test_project_categories_offered(org: Org) -> None:
    bob = await org.add_member("Bob")

    async def category(name: str) -> str:
        return str((await org.admin.gql("mutation($n: SvcName!) { addProjectCategory(name: $n)"
                                        " { id } }", {"n": name}))["addProjectCategory"]["id"])

    async def project(name: str, category_id: str) -> str:
        return str((await org.admin.gql(
            "mutation($n: SvcName!, $c: SvcId) { addProject(name: $n, categoryId: $c) { id } }",
            {"n": name, "c": category_id}))["addProject"]["id"])

    client, activity = await category("Client"), await category("Activity")
    acme, dev, loose = (await project("Acme", client), await project("Dev", activity),
                        await project("Loose", await category("Internal")))
    await setting(org, "listOfProjectCategories", "[[SvcId]]", [[client], [activity]])
    at = WEEK + 9 * HOUR_MS
    record = await added(bob, entry(bob, at, pr=[acme, dev]))
    assert await bob.gql(ADD, entry(bob, at, pr=[dev]))
    assert await bob.gql(ADD, entry(bob, at))  # offered, not required
    refusal = ("do not offer the projects Acme, Loose together (listOfProjectCategories of "
               "organisation ")
    for who in (bob, org.admin):
        message = await who.gql.error(ADD, entry(bob, at, pr=[acme, loose]))
        assert refusal in message and message.endswith(
            "choose one project of each level: Client; then Activity"), message
    assert "listOfProjectCategories" in await bob.gql.error(
        PROJECTS, {"id": record["id"], "v": [loose]})
    # Two projects of one level: each level is one choice.
    other_client = await project("Globex", client)
    assert "listOfProjectCategories" in await bob.gql.error(
        ADD, entry(bob, at, pr=[acme, other_client]))


async def test_time_beyond_the_period_schedule(org: Org) -> None:
    bob = await org.add_member("Bob")
    at = WEEK + 9 * HOUR_MS
    await added(bob, entry(bob, at, 20 * HOUR_MS))
    await added(bob, entry(bob, at + DAY_MS, 18 * HOUR_MS))
    await setting(org, "allowTimeRecordOutOfSchedulePeriod", "Boolean", False, person=bob)
    refusal = ("refuse time beyond the period's scheduled time (allowTimeRecordOutOfSchedule"
               "Period of person Bob): 2026-03-02 to 2026-03-08 has 40 h 00 min scheduled, "
               "38 h 00 min recorded: record at most 2 h 00 min more")
    for who in (bob, org.admin):
        assert refusal in await who.gql.error(ADD, entry(bob, at + 2 * DAY_MS, 3 * HOUR_MS))
    last = await added(bob, entry(bob, at + 2 * DAY_MS, 2 * HOUR_MS))
    assert await bob.gql(DURATION, {"id": last["id"], "v": 2 * HOUR_MS})  # itself not twice
    assert "allowTimeRecordOutOfSchedulePeriod" in await bob.gql.error(
        DURATION, {"id": last["id"], "v": 3 * HOUR_MS})
    assert await bob.gql(ADD, entry(bob, at + 7 * DAY_MS, 3 * HOUR_MS))  # the next week
    # A daily timesheet: the period is the day, 8 h scheduled.
    await setting(org, "periodicity", "SvcPeriodicity", "daily", person=bob)
    message = await bob.gql.error(ADD, entry(bob, at + 8 * DAY_MS, 9 * HOUR_MS))
    assert "2026-03-10 to 2026-03-10 has 8 h 00 min scheduled" in message, message
