"""Public holidays over POST /graphql: country calendars from the `holidays` package, the
calendars of the organisation, tags and persons with their own changes, their effect on a
person's planned days, and the rate limit on loading them."""

from __future__ import annotations

from typing import Any

from tests.support import DAY_MS, HOUR_MS, Org

NEW_YEAR_2026 = 1_767_225_600_000  # 2026-01-01T00:00:00Z, a Thursday
MAY_DAY_2026 = 1_777_593_600_000  # 2026-05-01T00:00:00Z, a Friday
CAL = "code lang holidays(year: 2026) { id name date { ts } disabled }"
ORG = ("{ currentOrganisation { publicHolidays { value { " + CAL
       + " } path { collection } } } }")


async def org_calendar(org: Org) -> dict[str, Any]:
    data = await org.admin.gql(ORG)
    return data["currentOrganisation"]["publicHolidays"]  # type: ignore[no-any-return]


async def test_country_codes_and_holidays(org: Org) -> None:
    found = (await org.admin.gql('{ getHolidayCountryCodes(code: "D") { code name languages '
                                 'flag } }'))["getHolidayCountryCodes"]
    germany = next(item for item in found if item["code"] == "DE")
    assert germany["name"] == "Germany" and "de" in germany["languages"]
    assert germany["flag"] == "\U0001F1E9\U0001F1EA"
    org.live.clock.frozen_ms = NEW_YEAR_2026 + 10 * DAY_MS
    listed = (await org.admin.gql('{ getHolidays(code: "DE", lang: "de") { name date { ts } '
                                  '} }'))["getHolidays"]
    assert listed[0] == {"name": "Neujahr", "date": {"ts": NEW_YEAR_2026}}
    assert "code" in await org.admin.gql.error('{ getHolidays(code: "XX") { name } }')
    assert "lang" in await org.admin.gql.error('{ getHolidays(code: "DE", lang: "zz") { name } }')


async def test_organisation_calendar_edits_and_inheritance(org: Org) -> None:
    edited = await org.admin.gql('mutation { editOrganisationPublicHolidays(code: "de", '
                                 'lang: "en") { id } }')
    assert edited["editOrganisationPublicHolidays"]["id"] == org.id
    calendar = await org_calendar(org)
    assert calendar["path"] == [{"collection": "organisations"}]
    value = calendar["value"]
    assert value["code"] == "DE" and value["lang"] == "en_US"
    new_year = value["holidays"][0]
    assert new_year["name"] == "New Year's Day" and new_year["date"] == {"ts": NEW_YEAR_2026}

    await org.admin.gql("mutation($h: SvcId!) { editOrganisationPublicHolidayName(holidayId: $h,"
                        ' name: "Neujahr") { id } }', {"h": new_year["id"]})
    await org.admin.gql("mutation($h: SvcId!, $d: SvcTimestamp!) { "
                        "editOrganisationPublicHolidayDate(holidayId: $h, date: $d) { id } }",
                        {"h": new_year["id"], "d": NEW_YEAR_2026 + DAY_MS + 5})
    may = next(h for h in value["holidays"] if h["date"]["ts"] == MAY_DAY_2026)
    await org.admin.gql("mutation($h: SvcId!) { editOrganisationPublicHolidayDisabled("
                        "holidayId: $h, disabled: true) { id } }", {"h": may["id"]})
    added = await org.admin.gql(
        'mutation($d: SvcTimestamp!) { addOrganisationPublicHoliday(holiday: {name: "Founders", '
        "date: $d, disabled: false}) { id } }", {"d": NEW_YEAR_2026 + 40 * DAY_MS})
    assert added["addOrganisationPublicHoliday"]["id"] == org.id
    holidays = (await org_calendar(org))["value"]["holidays"]
    assert holidays[0] == {"id": new_year["id"], "name": "Neujahr",
                           "date": {"ts": NEW_YEAR_2026 + DAY_MS}, "disabled": False}
    founders = next(h for h in holidays if h["name"] == "Founders")
    assert next(h for h in holidays if h["id"] == may["id"])["disabled"] is True
    await org.admin.gql("mutation($h: SvcId!) { removeOrganisationPublicHoliday(holidayId: $h) "
                        "{ id } }", {"h": founders["id"]})
    await org.admin.gql("mutation($h: SvcId!) { removeOrganisationPublicHoliday(holidayId: $h) "
                        "{ id } }", {"h": new_year["id"]})
    names = [h["name"] for h in (await org_calendar(org))["value"]["holidays"]]
    assert "Founders" not in names and "Neujahr" not in names
    assert "holidayId" in await org.admin.gql.error(
        'mutation { removeOrganisationPublicHoliday(holidayId: "0123456789abcdef01234567") '
        "{ id } }")
    assert "holiday.name" in await org.admin.gql.error(
        'mutation { addOrganisationPublicHoliday(holiday: {name: " ", date: 0, '
        "disabled: false}) { id } }")
    assert "code" in await org.admin.gql.error(
        'mutation { editOrganisationPublicHolidays(code: "Narnia") { id } }')

    # a person inherits the organisation's calendar, then has their own (France)
    bob = await org.add_member("Bob")
    person = ("query($p: SvcId!) { getPerson(id: $p) { publicHolidays { value { code } "
              "path { collection } } } }")
    seen = (await bob.gql(person, {"p": bob.id}))["getPerson"]["publicHolidays"]
    assert seen == {"value": {"code": "DE"}, "path": [{"collection": "organisations"}]}
    await org.admin.gql('mutation($p: SvcId!) { editPersonPublicHolidays(id: $p, code: "FR") '
                        "{ id } }", {"p": bob.id})
    seen = (await bob.gql(person, {"p": bob.id}))["getPerson"]["publicHolidays"]
    assert seen == {"value": {"code": "FR"}, "path": [{"collection": "persons"}]}
    tag = (await org.admin.gql('mutation { addTag(name: "Austria") { id } }'))["addTag"]["id"]
    await org.admin.gql('mutation($t: SvcId!) { editTagPublicHolidays(id: $t, code: "AT") '
                        "{ publicHolidays { value { code } path { collection } } } }",
                        {"t": tag})
    tagged = await org.admin.gql("query($t: SvcId!) { getTag(id: $t) { publicHolidays { "
                                 "value { code } } } }", {"t": tag})
    assert tagged["getTag"]["publicHolidays"]["value"] == {"code": "AT"}


async def test_holidays_remove_scheduled_time(org: Org) -> None:
    bob = await org.add_member("Bob")
    days = ("query($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { getPerson(id: $p) { "
            "scheduledDays(startTime: $s, endTime: $e) { workingDay holiday duration } "
            "expectedTime(startTime: $s, endTime: $e) } }")
    week = {"p": bob.id, "s": MAY_DAY_2026 - 4 * DAY_MS, "e": MAY_DAY_2026 + 3 * DAY_MS}
    assert (await bob.gql(days, week))["getPerson"]["expectedTime"] == 40 * HOUR_MS
    await org.admin.gql('mutation { editOrganisationPublicHolidays(code: "DE", lang: "en") '
                        "{ id } }")
    planned = (await bob.gql(days, week))["getPerson"]
    assert planned["expectedTime"] == 32 * HOUR_MS
    assert planned["scheduledDays"][4] == {"workingDay": False, "holiday": "Labor Day",
                                           "duration": 0}


async def test_employees_are_refused_and_loading_is_rate_limited(org: Org) -> None:
    bob = await org.add_member("Bob")
    assert await bob.gql.denied('mutation { editOrganisationPublicHolidays(code: "DE") '
                                "{ id } }") == ["Mutation.editOrganisationPublicHolidays"]
    assert await bob.gql.denied(
        'mutation($p: SvcId!) { addPersonPublicHoliday(id: $p, holiday: {name: "Mine", '
        "date: 0, disabled: false}) { id } }", {"p": bob.id}) == [
        "Mutation.addPersonPublicHoliday"]
    org.live.clock.frozen_ms = NEW_YEAR_2026
    for _ in range(30):
        await bob.gql('{ getHolidays(code: "DE") { id } }')
    message = await bob.gql.error('{ getHolidays(code: "DE") { id } }')
    assert "at most 30 times a minute" in message and "loading public holidays" in message
    # the limit is per person: the admin still loads
    await org.admin.gql('mutation { editOrganisationPublicHolidays(code: "DE") { id } }')
    org.live.clock.frozen_ms = NEW_YEAR_2026 + 60_001
    assert (await bob.gql('{ getHolidays(code: "DE") { id } }'))["getHolidays"]
