"""The options of absence types and expense types as one table (`type_flags`, `models`),
and the mutation that edits them."""

from typing import TYPE_CHECKING

from service.face import face_attribute

if TYPE_CHECKING:
    from service.type_options.type_flags import ABSENCE, EXPENSE, copy_options

__all__ = [
    "ABSENCE",
    "EXPENSE",
    "copy_options",
]


def __getattr__(name: str) -> object:
    return face_attribute(__name__, name)
