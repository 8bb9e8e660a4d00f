"""Every table of the service; importing this package registers them all on Base.metadata.
The tables live in their domains; the audit trail and rate limits, written for every domain,
live here."""

from service.absences.models import AbsenceType
from service.model_base import Base
from service.models.audit import AuditTrail
from service.organisation.account_models import RetiredKey, ServiceMail
from service.organisation.models import Organisation
from service.organisation.tag_models import PersonTag, ProjectTag, Tag, TagCategory
from service.people.models import ApiKey, Person, PersonManager, Role
from service.projects.models import Project, ProjectCategory, ProjectManager
from service.projects.task_models import Task, TaskCategory, TaskDependency, TaskOwner, TaskStatus
from service.time_records.models import (
    ExpenseRecord,
    ExpenseType,
    TimeRecord,
    time_record_projects,
)

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
    """The tables of every domain (`models`, `*_models` modules of service.domains) and of this
    package register without editing this file."""
    import importlib
    import pkgutil

    from service.domains import DOMAINS, modules_of_kind

    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    for name in modules_of_kind("models", DOMAINS):
        importlib.import_module(name)


_import_all_model_modules()
