"""Every table of the service; importing this package registers them all on Base.metadata."""

from service.models.account import RetiredKey, ServiceMail
from service.models.audit import AuditTrail
from service.models.base import Base
from service.models.organisation import Organisation
from service.models.person import ApiKey, Person, PersonManager, Role
from service.models.project import Project, ProjectCategory, ProjectManager
from service.models.records import (
    AbsenceType,
    ExpenseRecord,
    ExpenseType,
    TimeRecord,
    time_record_projects,
)
from service.models.tag import PersonTag, ProjectTag, Tag, TagCategory
from service.models.task import Task, TaskCategory, TaskDependency, TaskOwner, TaskStatus

__all__ = [
    "AbsenceType",
    "ApiKey",
    "AuditTrail",
    "Base",
    "ExpenseRecord",
    "ExpenseType",
    "Organisation",
    "Person",
    "PersonManager",
    "PersonTag",
    "Project",
    "ProjectCategory",
    "ProjectManager",
    "ProjectTag",
    "RetiredKey",
    "Role",
    "ServiceMail",
    "Tag",
    "TagCategory",
    "Task",
    "TaskCategory",
    "TaskDependency",
    "TaskOwner",
    "TaskStatus",
    "TimeRecord",
    "time_record_projects",
]


def _import_all_model_modules() -> None:
    """Model modules added later (approvals, legacy, ...) register without editing this file."""
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


_import_all_model_modules()
