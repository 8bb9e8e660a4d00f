"""The organisation (the tenant): its account and its life (`account_life`, `provisioning`),
the settings cascade (`settings_registry`, `settings_cascade`, `settings_sdl`, and
`keyed_settings`: the settings JSON by key, as the approval workflow and schedules read it),
its tags (`tag_models`, `tag_lookup`), the audit trail read back, and their resolvers."""

from typing import TYPE_CHECKING

from service.face import face_attribute

if TYPE_CHECKING:
    from service.organisation.keyed_settings import (
        APPROVAL_REMINDER,
        APPROVAL_STAGES,
        AUTO_SUBMIT,
        ONLY_ADMIN_EDITS_OTHERS,
        OWNER_OR_ADMIN_ONLY,
        own_value,
        resolve,
        set_value,
    )
    from service.organisation.provisioning import add_person, create_organisation, new_person
    from service.organisation.settings_cascade import (
        Resolved,
        for_person,
        own,
        person_zone,
        reader,
        set_json,
    )
    from service.organisation.settings_registry import (
        ATTRIBUTES,
        BY_NAME,
        LOCALISATION,
        TIME_SETTINGS,
    )
    from service.organisation.tag_lookup import default_tag_category

__all__ = [
    "APPROVAL_REMINDER",
    "APPROVAL_STAGES",
    "ATTRIBUTES",
    "AUTO_SUBMIT",
    "BY_NAME",
    "LOCALISATION",
    "ONLY_ADMIN_EDITS_OTHERS",
    "OWNER_OR_ADMIN_ONLY",
    "TIME_SETTINGS",
    "Resolved",
    "add_person",
    "create_organisation",
    "default_tag_category",
    "for_person",
    "new_person",
    "own",
    "own_value",
    "person_zone",
    "reader",
    "resolve",
    "set_json",
    "set_value",
]


def __getattr__(name: str) -> object:
    return face_attribute(__name__, name)
