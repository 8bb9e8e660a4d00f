"""The declarative base of the bot's own database: every table of it derives from StateBase."""

from __future__ import annotations

from sqlalchemy import MetaData
from sqlalchemy.orm import DeclarativeBase

from plumbing.db import NAMING


class StateBase(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
