"""What a person's screens remember and the organisation's onboarding state.

`editPerson{Screen,Task,Journal}Settings(id, settings)`: opaque strings a client keeps for
the person (at most 16384 characters; null clears), one row of SETTINGS each. A person
edits and reads their own; an administrator anyone's (another person reading them is
refused, the field is omitted). `editOrganisationOnboarding(onboarding)`: the fields
given replace the stored ones (null input clears it all); the Settings permission edits
it, every member reads it.
"""

from __future__ import annotations

from typing import Any

from ariadne import MutationType, ObjectType

from service.access import SETTINGS as SETTINGS_PERMISSION
from service.access import require
from service.errors import BadInput, PermissionDenied
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import Organisation, Person
from service.organisation import set_json

MAX_SETTINGS = 16_384
MAX_TEXT = 255
MAX_FEATURES = 100
ONBOARDING = "onboarding"
ONBOARDING_TEXTS = ("lastStep", "tool", "role", "size", "channel")
ONBOARDING_FLAGS = ("isOnboard", "requestedDemo")

# GraphQL field / mutation name part -> key in the person's settings JSON.
SETTINGS = {"screenSettings": "Screen", "taskSettings": "Task", "journalSettings": "Journal"}

mutation = MutationType()
person_type = ObjectType("SvcPerson")
organisation_type = ObjectType("SvcOrganisation")


def _own_or_admin(context: RequestContext, person_id: str, what: str) -> None:
    if person_id != context.person.id and not context.is_admin:
        raise PermissionDenied(f"only the person or an administrator may {what}")


def check_settings(value: Any) -> str | None:
    if value is None:
        return None
    if len(value) > MAX_SETTINGS:
        raise BadInput("settings", f"is {len(value)} characters long, at most {MAX_SETTINGS}")
    return str(value)


def bind_settings(field: str, part: str) -> None:
    async def edit(_root: Any, info: Any, id: str, settings: str | None = None) -> Person:
        context: RequestContext = info.context
        _own_or_admin(context, id, f"edit a person's {part.lower()} settings")
        person = await get_in_org(context.session, Person, context.org_id, id, "id", "person")
        set_json(person, field, check_settings(settings))
        return person

    def read(person: Person, info: Any) -> str | None:
        _own_or_admin(info.context, person.id, f"read a person's {part.lower()} settings")
        value = (person.settings or {}).get(field)
        return value if isinstance(value, str) else None

    mutation.set_field(f"editPerson{part}Settings", edit)
    person_type.set_field(field, read)


for _field, _part in SETTINGS.items():
    bind_settings(_field, _part)


def _text(name: str, value: Any) -> str | None:
    if value is None:
        return None
    if len(value) > MAX_TEXT:
        raise BadInput(f"onboarding.{name}", f"is longer than {MAX_TEXT} characters")
    return str(value)


async def check_onboarding(context: RequestContext, given: dict[str, Any]) -> dict[str, Any]:
    """The fields given, checked; the person named must be one of the organisation's."""
    checked: dict[str, Any] = {}
    for name in ONBOARDING_TEXTS:
        if name in given:
            checked[name] = _text(name, given[name])
    for name in ONBOARDING_FLAGS:
        if name in given:
            checked[name] = given[name]
    if "features" in given:
        features = given["features"]
        if features is not None:
            if len(features) > MAX_FEATURES:
                raise BadInput("onboarding.features", f"at most {MAX_FEATURES} features")
            features = [_text("features", f) for f in features if f is not None]
        checked["features"] = features
    if given.get("personId") is not None:
        person = await get_in_org(context.session, Person, context.org_id, given["personId"],
                                  "onboarding.personId", "person")
        checked["personId"] = person.id
    elif "personId" in given:
        checked["personId"] = None
    return checked


@mutation.field("editOrganisationOnboarding")
async def resolve_edit_onboarding(
    _root: Any, info: Any, onboarding: dict[str, Any] | None = None
) -> Organisation:
    context: RequestContext = info.context
    require(context, SETTINGS_PERMISSION, "edit the onboarding")
    organisation = context.organisation
    if onboarding is None:
        set_json(organisation, ONBOARDING, None)
        return organisation
    stored = dict((organisation.settings or {}).get(ONBOARDING) or {})
    stored.update(await check_onboarding(context, onboarding))
    set_json(organisation, ONBOARDING, {k: v for k, v in stored.items() if v is not None})
    return organisation


@organisation_type.field("onboarding")
def resolve_onboarding(organisation: Organisation, _info: Any) -> dict[str, Any] | None:
    stored = (organisation.settings or {}).get(ONBOARDING)
    return dict(stored) if isinstance(stored, dict) else None


BINDABLES = [mutation, person_type, organisation_type]
