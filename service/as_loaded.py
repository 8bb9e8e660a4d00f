"""Entities built from the columns of a Core row and put in the session as the ORM's loading
would have put them.

On the hottest paths (a request's authentication, a write's projects) the ORM's loading —
its compile state, the row processors it builds at each execution, its per-row instance
processing — costs more than the statement itself. `Columns` selects an entity's column
attributes (deferred ones left out, as the ORM leaves them), and `build` makes the entity
from its slice of a row:
- already in the session's identity map: that object, its unloaded attributes filled in
  from the row, its loaded ones untouched (what the ORM does without populate_existing);
- otherwise a new one, as `orm.loading` makes it: every column attribute and every
  relationship (each many-to-one, given by the caller: read in the same row) loaded.
No load events are sent (the service listens to none).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from sqlalchemy import ColumnElement, FromClause, Label
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import ColumnProperty, InstanceState, Session
from sqlalchemy.orm.attributes import instance_dict, instance_state, set_committed_value

T = TypeVar("T")


class Columns(Generic[T]):
    """The column attributes of `entity` read from `table` (its table, or an alias of it),
    each labelled `<prefix><attribute>` so that several entities share a row. `relations`
    must name every relationship of the entity: `build` is given their values."""

    def __init__(self, entity: type[T], table: FromClause | None = None, prefix: str = "",
                 relations: tuple[str, ...] = ()) -> None:
        mapper = sa_inspect(entity)
        every = {relation.key: relation for relation in mapper.relationships}
        if set(every) != set(relations) or any(every[name].uselist for name in relations):
            # A relationship left out would be neither loaded nor lazy-loadable here.
            raise ValueError(f"{entity.__name__}: relations must be its many-to-ones {every}")
        source = table if table is not None else mapper.local_table
        attributes: list[tuple[str, ColumnElement[Any]]] = []
        for prop in mapper.column_attrs:
            if not isinstance(prop, ColumnProperty) or prop.deferred or len(prop.columns) != 1:
                continue
            attributes.append((prop.key, source.c[prop.columns[0].key]))
        self.keys = tuple(key for key, _ in attributes)
        self.labelled: list[Label[Any]] = [
            column.label(f"{prefix}{key}") for key, column in attributes
        ]
        primary = [mapper.get_property_by_column(column).key for column in mapper.primary_key]
        if len(primary) != 1:
            raise ValueError(f"{entity.__name__}: one primary key column expected")
        self.width = len(self.keys)
        self._primary = self.keys.index(primary[0])
        self._mapper = mapper
        self._manager = mapper.class_manager

    def identity(self, row: Sequence[Any], offset: int) -> Any:
        """The primary key in the row's columns from `offset` on."""
        return row[offset + self._primary]

    def build(self, session: AsyncSession, row: Sequence[Any], offset: int,
              related: dict[str, Any] | None = None) -> T | None:
        """The entity of the row's columns from `offset` on (None when its primary key is
        null: an outer join's missing row), with `related` (relation: value) loaded."""
        identity = row[offset + self._primary]
        if identity is None:
            return None
        values = dict(zip(self.keys, row[offset:offset + self.width], strict=True))
        if related:
            values.update(related)
        sync = session.sync_session
        key = self._mapper.identity_key_from_primary_key((identity,))
        found: Any = sync.identity_map.get(key)
        if found is not None:
            loaded = instance_dict(found)
            for name, value in values.items():
                if name not in loaded:
                    set_committed_value(found, name, value)
            return found  # type: ignore[no-any-return]
        entity: Any = self._manager.new_instance()
        state = instance_state(entity)
        state.dict.update(values)
        _attach(sync, state, key)
        return entity  # type: ignore[no-any-return]


def attach_written(session: AsyncSession, entity: object) -> None:
    """Put a new entity that the caller has just INSERTed in the session as if loaded: its
    attributes, relationships included, set without attribute events (as `new_record`
    sets them), become its loaded state. (`make_transient_to_detached` and `Session.add`
    do the same, with a cascade over the relationships and attach events that cost more.)"""
    state = instance_state(entity)
    if state.key is not None or state.session_id is not None:
        raise ValueError(f"{entity!r} is already persistent")
    key = state.mapper.identity_key_from_instance(entity)
    state._commit_all(state.dict)
    unloaded = state.unloaded
    if unloaded:  # as make_transient_to_detached leaves them: expired
        state._expire_attributes(state.dict, unloaded)
    _attach(session.sync_session, state, key)


def _attach(sync: Session, state: InstanceState[Any], key: Any) -> None:
    # As orm.loading._instance attaches a new row's instance.
    state.key = key
    state.identity_token = key[2]
    state.session_id = sync.hash_key
    sync.identity_map._add_unpresent(state, key)
