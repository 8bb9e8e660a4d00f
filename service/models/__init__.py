"""Every table of the service; importing this package registers them all on Base.metadata.
The tables live in their domains; the audit trail and rate limits, written for every domain,
live here. Code of one domain reaches the tables of another (and the values of their columns)
through this package, never through the other domain's `models` modules; only tables refer to
tables of other domains directly."""

from service.absences.models import AbsenceType
from service.access.models import ProjectAccess
from service.budgets.models import Budget, BudgetSplit
from service.custom_fields.models import CustomField, CustomFieldLink, CustomFieldValue
from service.model_base import Base
from service.models.audit import AuditTrail
from service.organisation.account_models import RetiredKey, ServiceMail
from service.organisation.models import Organisation
from service.organisation.tag_models import PersonTag, ProjectTag, Tag, TagCategory
from service.people.models import (
    ACCOUNT_KIND,
    INTEGRATION_KIND,
    KEY_INTEGRATION,
    ROLE_ADMIN,
    ROLE_CUSTOM,
    ROLE_EMPLOYEE,
    ROLE_KINDS,
    ROLE_MANAGER,
    ApiKey,
    Person,
    PersonManager,
    Role,
)
from service.plannings.models import ScheduleType
from service.plannings.task_plan_models import TaskPlan
from service.projects.models import Project, ProjectCategory, ProjectManager
from service.projects.relations_more_models import (
    ProjectSubProject,
    ScheduleTypeAccess,
    TagManager,
    TaskManager,
    TaskTag,
    TaskTagAccess,
)
from service.projects.task_models import Task, TaskCategory, TaskDependency, TaskOwner, TaskStatus
from service.projects.task_status_history_models import TaskStatusChange
from service.rates.models import RATE_BILLING, RATE_COST
from service.signin.models import BrowserSession
from service.time_records.models import (
    ExpenseRecord,
    ExpenseType,
    TimeRecord,
    time_record_projects,
)
from service.timesheets.models import (
    DELIVERY_DELIVERED,
    DELIVERY_FAILED,
    DELIVERY_PENDING,
    STATUS_APPROVED,
    STATUS_DRAFT,
    ApprovalEvent,
    IntegrationWebhook,
    Timesheet,
    WebhookDelivery,
)
from service.type_options.models import AbsenceTypeOptions

__all__ = [
    "ACCOUNT_KIND",
    "DELIVERY_DELIVERED",
    "DELIVERY_FAILED",
    "DELIVERY_PENDING",
    "INTEGRATION_KIND",
    "KEY_INTEGRATION",
    "RATE_BILLING",
    "RATE_COST",
    "ROLE_ADMIN",
    "ROLE_CUSTOM",
    "ROLE_EMPLOYEE",
    "ROLE_KINDS",
    "ROLE_MANAGER",
    "STATUS_APPROVED",
    "STATUS_DRAFT",
    "AbsenceType",
    "AbsenceTypeOptions",
    "ApiKey",
    "ApprovalEvent",
    "AuditTrail",
    "Base",
    "BrowserSession",
    "Budget",
    "BudgetSplit",
    "CustomField",
    "CustomFieldLink",
    "CustomFieldValue",
    "ExpenseRecord",
    "ExpenseType",
    "IntegrationWebhook",
    "Organisation",
    "Person",
    "PersonManager",
    "PersonTag",
    "Project",
    "ProjectAccess",
    "ProjectCategory",
    "ProjectManager",
    "ProjectSubProject",
    "ProjectTag",
    "RetiredKey",
    "Role",
    "ScheduleType",
    "ScheduleTypeAccess",
    "ServiceMail",
    "Tag",
    "TagCategory",
    "TagManager",
    "Task",
    "TaskCategory",
    "TaskDependency",
    "TaskManager",
    "TaskOwner",
    "TaskPlan",
    "TaskStatus",
    "TaskStatusChange",
    "TaskTag",
    "TaskTagAccess",
    "TimeRecord",
    "Timesheet",
    "WebhookDelivery",
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
