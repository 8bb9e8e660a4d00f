"""The people directory reuses recent look-ups, but a link made in this process replaces what
it remembered at once: a person who relinks a new key is acted for with the new key."""

from __future__ import annotations

from sqlalchemy import select

from plumbing.db import unit_of_work
from service.models import Person
from service.organisation.provisioning import reset_api_key
from tests.support import Org


async def test_relinking_a_new_key_takes_effect_at_once(org: Org) -> None:
    runtime = org.live.app.state.runtime
    directory = runtime.directory
    member = await org.add_member("Rhea Relink")

    await directory.link(member.email, member.apikey)
    assert await directory.apikey_for(org.id, member.id) == member.apikey
    found = await directory.find_by_person_id(member.id)
    assert found.email == member.email

    async with unit_of_work(org.live.service.sessions) as session:
        person = (await session.scalars(select(Person).where(Person.id == member.id))).one()
        new_key = await reset_api_key(session, person, org.live.clock.now_ms())
    assert new_key != member.apikey

    await directory.link(member.email, new_key)
    assert await directory.apikey_for(org.id, member.id) == new_key
    data = await runtime.client.execute("query { currentPerson { id } }",
                                        apikey=await directory.apikey_for(org.id, member.id))
    assert data["currentPerson"]["id"] == member.id


async def test_many_first_look_ups_of_one_person_at_once_make_one_link(org: Org) -> None:
    """Replies from a new approver processed side by side all provision her at once: on
    PostgreSQL the inserts race; every look-up succeeds and one link remains."""
    import asyncio

    from timebot.state.models import PersonLink

    runtime = org.live.app.state.runtime
    member = await org.add_member("Rosa Race")
    found = await asyncio.gather(
        *(runtime.directory.find_by_person_id(member.id) for _ in range(8))
    )
    assert {entry.email for entry in found} == {member.email}
    async with runtime.state_sessions() as session:
        links = list(await session.scalars(
            select(PersonLink).where(PersonLink.person_id == member.id)
        ))
    assert len(links) == 1
