"""Planning: work schedules and their timeline (`models`, `schedule_rules`, `schedule_plan`),
public holidays (`holiday_rules`), a task's planning (`task_plan_models`, `task_plans`), the
planned-vs-real and budget reports (`planned_vs_real`), and their resolvers."""

from typing import TYPE_CHECKING

from service.face import face_attribute

if TYPE_CHECKING:
    from service.plannings.schedule_plan import (
        MAX_DAYS,
        out_of_schedule_allowed,
        plan_person,
        planned_day,
        remember_timelines_of,
    )
    from service.plannings.schedule_rules import (
        DEFAULT_DAY_MS,
        PlannedDay,
        expected_ms,
        out_of_schedule_refusal,
    )
    from service.plannings.task_plans import (
        check_end_unlocked,
        holiday_test,
        plan_for_edit,
        plan_of,
        plans,
    )

__all__ = [
    "DEFAULT_DAY_MS",
    "MAX_DAYS",
    "PlannedDay",
    "check_end_unlocked",
    "expected_ms",
    "holiday_test",
    "out_of_schedule_allowed",
    "out_of_schedule_refusal",
    "plan_for_edit",
    "plan_of",
    "plan_person",
    "planned_day",
    "plans",
    "remember_timelines_of",
]


def __getattr__(name: str) -> object:
    return face_attribute(__name__, name)
