"""Projects and their tasks: the project tree, categories and managers (`models`, `lookup`),
tasks with their categories, statuses, owners, relations and recurrence
(`task_models`, `task_statuses`, `recurrence_rules`, ...), and their resolvers."""

from typing import TYPE_CHECKING

from service.face import face_attribute

if TYPE_CHECKING:
    from service.projects.lookup import default_project_category

__all__ = [
    "default_project_category",
]


def __getattr__(name: str) -> object:
    return face_attribute(__name__, name)
