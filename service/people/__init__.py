"""People: who they are (`models`), their details, lifecycle and managers, invitations and
joining (`invitations`, `join_mail`, and `signup`: a sign-in code's twin that creates the
organisation and its first person), importing them from CSV (`csv_import`, `import_plan`,
`import_store`), the checks their changes pass (`checks`) and their resolvers."""

from typing import TYPE_CHECKING

from service.face import face_attribute

if TYPE_CHECKING:
    from service.people.columns import LABELLED, PERSONS, ROLE_OF_PERSON, ROLES, person_of

__all__ = [
    "LABELLED",
    "PERSONS",
    "ROLES",
    "ROLE_OF_PERSON",
    "person_of",
]


def __getattr__(name: str) -> object:
    return face_attribute(__name__, name)
