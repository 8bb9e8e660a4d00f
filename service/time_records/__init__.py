"""Time records: the table (`models`, which also holds expense types and
expense records), who may see and edit them (`access`), selecting them (`query`), the writes
and the entry rules they pass (`writes`, `entry_rules`, `entry_settings`), their resolvers."""

from typing import TYPE_CHECKING

from service.face import face_attribute

if TYPE_CHECKING:
    from service.time_records.access import require_edit_access
    from service.time_records.entry_rules import ANY, Entry, Write
    from service.time_records.entry_settings import checked, project_facts
    from service.time_records.writes import guard_edit

__all__ = [
    "ANY",
    "Entry",
    "Write",
    "checked",
    "guard_edit",
    "project_facts",
    "require_edit_access",
]


def __getattr__(name: str) -> object:
    return face_attribute(__name__, name)
