"""The kinds of entity a Journal message names (`SvcType`): its reference and its mentions."""

from __future__ import annotations

from typing import Any

from service.models import Person, Project, Tag, Task, TimeRecord
from service.timesheets.journal import REFERENCE_TYPE
from service.timesheets.models import ApprovalEvent

ENTITY_MODELS: dict[str, Any] = {
    "person": Person,
    "project": Project,
    "task": Task,
    "tag": Tag,
    "timeRecord": TimeRecord,
    REFERENCE_TYPE: ApprovalEvent,
}
