"""Time off: absence types, their accrual and allowances (`models`, `allowances`, `time_off_rules`),
how the approval workflow treats time off (`approval`), and their resolvers."""

from typing import TYPE_CHECKING

from service.face import face_attribute

if TYPE_CHECKING:
    from service.absences.allowances import check_records_balance
    from service.absences.approval import (
        only_unreviewed,
        reviewed,
        unlocked,
        unreviewed,
        unreviewed_type_ids,
    )

__all__ = [
    "check_records_balance",
    "only_unreviewed",
    "reviewed",
    "unlocked",
    "unreviewed",
    "unreviewed_type_ids",
]


def __getattr__(name: str) -> object:
    return face_attribute(__name__, name)
