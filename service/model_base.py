"""Declarative base and the columns every service table shares."""

from __future__ import annotations

from sqlalchemy import BigInteger, ForeignKey, MetaData, String
from sqlalchemy.orm import DeclarativeBase, Mapped, declared_attr, mapped_column

from plumbing.db import NAMING
from plumbing.ids import new_id
from plumbing.schema_versions import releases_table


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


def id_column() -> Mapped[str]:
    return mapped_column(String(24), primary_key=True, default=new_id)


def ms_column(nullable: bool = False) -> Mapped[int]:
    return mapped_column(BigInteger, nullable=nullable)


class OrgScoped:
    """Every tenant table carries its organisation; queries always filter on it."""

    @declared_attr
    def organisation_id(cls) -> Mapped[str]:
        return mapped_column(
            String(24), ForeignKey("organisations.id", ondelete="CASCADE"), index=True
        )


# Which release brought the database to each revision (plumbing.schema_versions): an older
# release names it when it refuses the schema.
SCHEMA_RELEASES = releases_table(Base.metadata, "service_schema_releases")
