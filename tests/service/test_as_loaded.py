"""Entities made from Core rows (service/as_loaded.py) are those the ORM would have loaded:
the same values, in the session's identity map, clean, their relationships loaded; an
object already in the session is returned as it is."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import event, inspect, select

from service.as_loaded import Columns, attach_written
from service.graphql.auth import authenticate
from service.models import Organisation, Person, PersonTag, Role, Tag, TagCategory, TimeRecord
from service.organisation.settings_cascade import person_tags
from tests.support import Org


def _columns(entity: Any) -> dict[str, Any]:
    state = inspect(entity)
    return {attr.key: getattr(entity, attr.key) for attr in state.mapper.column_attrs}


async def test_authentication_loads_what_the_orm_loads(org: Org) -> None:
    member = await org.add_member("Eve", "manager")
    service = org.live.service
    async with service.sessions() as session:
        expected_org = await session.get(Organisation, org.id)
        expected_person = await session.get(Person, member.id)
        assert expected_org is not None and expected_person is not None
        expected = (_columns(expected_org), _columns(expected_person),
                    _columns(expected_person.role))
    statements: list[str] = []

    def count(*args: Any) -> None:
        statements.append(args[2])

    async with service.sessions() as session:
        organisation, person, _kind = await authenticate(session, member.apikey, 0)
        assert (_columns(organisation), _columns(person), _columns(person.role)) == expected
        event.listen(service.engine.sync_engine, "before_cursor_execute", count)
        try:
            # In the identity map: found without a statement.
            assert await session.get(Organisation, org.id) is organisation
            assert await session.get(Person, member.id) is person
            assert await session.get(Role, person.role_id) is person.role
        finally:
            event.remove(service.engine.sync_engine, "before_cursor_execute", count)
        assert statements == []
        for entity in (organisation, person, person.role):
            state = inspect(entity)
            assert state.persistent and not state.modified and not state.expired_attributes
        assert not session.dirty and not session.new


async def test_an_object_already_in_the_session_is_kept(org: Org) -> None:
    member = await org.add_member("Eve", "employee")
    async with org.live.service.sessions() as session:
        person = await session.get(Person, member.id)
        assert person is not None
        person.name = "Changed, not flushed"
        _organisation, authenticated, _kind = await authenticate(session, member.apikey, 0)
        assert authenticated is person
        # Flushed first (autoflush, as before an ORM read), not overwritten by the row.
        assert person.name == "Changed, not flushed"
        assert not session.dirty


async def test_an_expired_object_is_filled_in_from_the_row(org: Org) -> None:
    member = await org.add_member("Eve", "employee")
    async with org.live.service.sessions() as session:
        person = await session.get(Person, member.id)
        assert person is not None
        session.expire(person)
        _organisation, authenticated, _kind = await authenticate(session, member.apikey, 0)
        assert authenticated is person
        assert not inspect(person).expired_attributes
        assert person.name == "Eve"


def test_every_relationship_must_be_read_along() -> None:
    with pytest.raises(ValueError, match="relations"):
        Columns(Person)
    with pytest.raises(ValueError, match="relations"):
        Columns(TimeRecord, relations=("person", "task", "absence", "projects"))


def test_columns_are_those_the_orm_selects() -> None:
    statement = select(Person)
    orm_columns = {column.key for column in statement.selected_columns}
    assert set(Columns(Person, relations=("role",)).keys) == orm_columns


async def test_a_written_record_is_in_the_session_as_loaded(org: Org) -> None:
    """What insert_records leaves: the new record found by `get` without a statement,
    clean (nothing written again at the flush)."""
    member = await org.add_member("Eve", "employee")
    response = await member.gql(
        """mutation($p: SvcId!) { addTimeRecord(startTime: 1700000000000, duration: 60000,
        personId: $p) { id } }""", {"p": member.id})
    service = org.live.service
    async with service.sessions() as session:
        written = await session.get(TimeRecord, response["addTimeRecord"]["id"])
        assert written is not None
        values = _columns(written)
        session.expunge(written)
        fresh = inspect(TimeRecord).class_manager.new_instance()
        inspect(fresh).dict.update(values, person=written.person, task=None, absence=None,
                                   projects=[])
        attach_written(session, fresh)
        statements: list[str] = []

        def count(*args: Any) -> None:
            statements.append(args[2])

        event.listen(service.engine.sync_engine, "before_cursor_execute", count)
        try:
            assert await session.get(TimeRecord, values["id"]) is fresh
            await session.flush()
        finally:
            event.remove(service.engine.sync_engine, "before_cursor_execute", count)
        assert statements == []
        state = inspect(fresh)
        assert state.persistent and not state.modified and not state.expired_attributes
        assert fresh.person is written.person and fresh.projects == []
        with pytest.raises(ValueError, match="persistent"):
            attach_written(session, fresh)


async def _tags_as_the_orm_loads(session: Any, org_id: str, person_id: str) -> list[Any]:
    rows = await session.scalars(
        select(Tag).join(PersonTag, PersonTag.tag_id == Tag.id)
        .where(PersonTag.organisation_id == org_id, PersonTag.person_id == person_id)
        .execution_options(populate_existing=True))
    return [(_columns(tag), tag.category and _columns(tag.category))
            for tag in sorted(rows.unique(), key=lambda t: t.id)]


async def test_a_persons_tags_are_what_the_orm_loads(org: Org) -> None:
    """service.organisation.settings_cascade.person_tags reads Core columns: each tag, its category
    loaded or None, as the ORM's joined loading gave them."""
    member = await org.add_member("Eve", "employee")
    async with org.live.service.sessions() as session:
        category = TagCategory(organisation_id=org.id, name="Teams", level_names=["Team"])
        session.add(category)
        await session.flush()
        for name, category_id in (("Blue", category.id), ("Loose", None)):
            tag = Tag(organisation_id=org.id, name=name, category_id=category_id, created_ms=1,
                      settings={"timeZone": "Europe/Paris"} if category_id else {})
            session.add(tag)
            await session.flush()
            session.add(PersonTag(organisation_id=org.id, tag_id=tag.id, person_id=member.id))
        await session.commit()
    async with org.live.service.sessions() as session:
        expected = await _tags_as_the_orm_loads(session, org.id, member.id)
    assert len(expected) == 2
    async with org.live.service.sessions() as session:
        found = await person_tags(session, org.id, member.id)
        assert [(_columns(tag), tag.category and _columns(tag.category))
                for tag in sorted(found, key=lambda t: t.id)] == expected
        for tag in found:
            state = inspect(tag)
            assert state.persistent and not state.modified and "category" not in state.unloaded
        assert not session.dirty and not session.new


async def test_a_tag_given_in_the_same_transaction_counts(org: Org) -> None:
    """As the ORM's autoflush did: a person's tag added in this session and not yet flushed is
    among their tags."""
    member = await org.add_member("Eve", "employee")
    async with org.live.service.sessions() as session:
        tag = Tag(organisation_id=org.id, name="Fresh", created_ms=1)
        session.add(tag)
        await session.flush()
        session.add(PersonTag(organisation_id=org.id, tag_id=tag.id, person_id=member.id))
        assert [t.name for t in await person_tags(session, org.id, member.id)] == ["Fresh"]
        await session.rollback()
