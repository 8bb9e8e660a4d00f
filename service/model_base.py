"""Declarative base and the columns every service table shares."""

from __future__ import annotations

import importlib

from sqlalchemy import BigInteger, ForeignKey, MetaData, String, event
from sqlalchemy.orm import DeclarativeBase, Mapped, Mapper, declared_attr, mapped_column

from plumbing.db import NAMING
from plumbing.ids import new_id
from plumbing.schema_versions import releases_table


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


@event.listens_for(Mapper, "before_configured")
def _register_every_table() -> None:
    """Before the first use of any table, every table of the service is registered (the
    registry, service.models, imports each domain's): a process that imported one domain's
    models still flushes rows whose foreign keys name another domain's tables."""
    importlib.import_module("service.models")


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
