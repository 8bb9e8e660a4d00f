"""The declarative base of the bot's own database: every table of it derives from StateBase."""

from __future__ import annotations

from sqlalchemy import MetaData
from sqlalchemy.orm import DeclarativeBase

from plumbing.db import NAMING
from plumbing.schema_versions import releases_table


class StateBase(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


# Which release brought the database to each revision (plumbing.schema_versions): an older
# release names it when it refuses the schema.
SCHEMA_RELEASES = releases_table(StateBase.metadata, "timebot_schema_releases")
