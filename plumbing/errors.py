"""The plumbing's exceptions: one hierarchy, each message saying what was wrong."""

from __future__ import annotations


class PlumbingError(Exception):
    """Base of the errors raised below timebot and the service."""


class SchemaNewerThanCode(PlumbingError):
    """The database was migrated by a newer release than the one running: this code does not
    know its schema, so it refuses to start rather than read or write it."""
