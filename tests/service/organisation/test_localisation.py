"""Time zones and currencies of the organisation and of people."""

from __future__ import annotations

from tests.support import Org

READ = (
    "query($id: SvcId!) { getPerson(id: $id) {"
    " localisation { timeZone { value } currency { value } } } }"
)


async def test_a_person_inherits_and_overrides_the_organisation(org: Org) -> None:
    bob = await org.add_member("Bob")
    data = await bob.gql(READ, {"id": bob.id})
    assert data["getPerson"]["localisation"] == {
        "timeZone": {"value": "UTC"}, "currency": {"value": "EUR"}
    }
    await org.admin.gql(
        'mutation { editOrganisationLocalisationTimeZone(timeZone: "Europe/Berlin") { id }'
        ' editOrganisationLocalisationCurrency(currency: "chf") { id } }'
    )
    data = await bob.gql(READ, {"id": bob.id})
    assert data["getPerson"]["localisation"]["timeZone"]["value"] == "Europe/Berlin"
    assert data["getPerson"]["localisation"]["currency"]["value"] == "CHF"
    own = await bob.gql(
        "mutation($id: SvcId!) { editPersonLocalisationTimeZone(id: $id,"
        ' timeZone: "America/New_York") { localisation { timeZone { value } } } }',
        {"id": bob.id},
    )
    assert own["editPersonLocalisationTimeZone"]["localisation"]["timeZone"]["value"] == (
        "America/New_York"
    )
    org_data = await org.admin.gql(
        "{ currentOrganisation { localisation { timeZone { value } } } }"
    )
    assert org_data["currentOrganisation"]["localisation"]["timeZone"]["value"] == "Europe/Berlin"


async def test_refusals_and_bad_zones(org: Org) -> None:
    bob = await org.add_member("Bob")
    carol = await org.add_member("Carol")
    denied = await bob.gql.denied(
        "mutation($id: SvcId!) {"
        ' editPersonLocalisationTimeZone(id: $id, timeZone: "UTC") { id } }',
        {"id": carol.id},
    )
    assert denied == ["Mutation.editPersonLocalisationTimeZone"]
    assert await bob.gql.denied(
        'mutation { editOrganisationLocalisationTimeZone(timeZone: "UTC") { id } }'
    ) == ["Mutation.editOrganisationLocalisationTimeZone"]
    message = await org.admin.gql.error(
        "mutation($z: SvcTimeZone) { editOrganisationLocalisationTimeZone(timeZone: $z) { id } }",
        {"z": "Mars/Olympus"},
    )
    assert "Mars/Olympus" in message and "$z" in message


async def test_a_tag_s_time_zone_counts_its_people_s_days(org: Org) -> None:
    bob = await org.add_member("Bob")
    tag = (await org.admin.gql('mutation { addTag(name: "Tokyo office") { id } }'))["addTag"]["id"]
    await org.admin.gql(
        "mutation($t: SvcId!, $p: SvcId!) { tagPerson(tagId: $t, personId: $p) { id }"
        ' editTagLocalisationTimeZone(id: $t, timeZone: "Asia/Tokyo") { id } }',
        {"t": tag, "p": bob.id},
    )
    monday = 1_773_619_200_000  # 2026-03-16T00:00:00Z
    data = await bob.gql(
        "query($id: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { getPerson(id: $id) {"
        " localisation { timeZone { value path { collection } } }"
        " scheduledDays(startTime: $s, endTime: $e) { date { ts } } } }",
        {"id": bob.id, "s": monday - 10 * 3_600_000, "e": monday + 3_600_000},
    )
    person = data["getPerson"]
    assert person["localisation"]["timeZone"] == {
        "value": "Asia/Tokyo", "path": [{"collection": "tags"}]}
    # The day that starts in the window: Monday in Tokyo starts at 15:00 UTC on Sunday (in UTC
    # it would be Monday 00:00).
    assert [d["date"]["ts"] for d in person["scheduledDays"]] == [monday - 9 * 3_600_000]
