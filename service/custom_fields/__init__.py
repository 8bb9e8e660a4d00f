"""Custom fields: every field type as one table (`registry`, its SDL: `sdl`), definitions and
values (`models`, `store`), where a field shows (`visibility_rules`), and their resolvers."""

from typing import TYPE_CHECKING

from service.face import face_attribute

if TYPE_CHECKING:
    from service.custom_fields.registry import field_type, options_of
    from service.custom_fields.store import listable_field_ids
    from service.custom_fields.visibility_rules import normalised

__all__ = [
    "field_type",
    "listable_field_ids",
    "normalised",
    "options_of",
]


def __getattr__(name: str) -> object:
    return face_attribute(__name__, name)
