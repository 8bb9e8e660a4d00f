"""The demo organisation's custom field: "Cost centre", a text field with allowed values that
shows on projects (of every category, at the top level) and on worked time; each client has
its cost centre. Called once from service/demo/__init__.py."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from service.custom_fields.models import CustomField, CustomFieldValue
from service.custom_fields.visibility_rules import initial
from service.models import Project

# Top-level project -> its cost centre (the field's allowed values, in this order).
COST_CENTRES = {"Harbor Bank": "CC-100", "Greenfield Foods": "CC-200", "Internal": "CC-900"}


async def seed_custom_fields(session: AsyncSession, org_id: str,
                             projects: dict[str, Project]) -> CustomField:
    visibility = initial()
    categories = dict.fromkeys(projects[name].category_id for name in COST_CENTRES)
    visibility["projects"] = [{"categoryId": category, "levels": [0]} for category in categories]
    field = CustomField(
        organisation_id=org_id, name="Cost centre", field_type="text", color="#0b6e4f",
        archived=False, visibility=visibility,
        options={"allowedValues": list(COST_CENTRES.values()), "useAllowedValues": True,
                 "maxLength": 16, "placeholder": "CC-000"},
    )
    session.add(field)
    await session.flush()
    for name, centre in COST_CENTRES.items():
        project = projects[name]
        session.add(CustomFieldValue(
            organisation_id=org_id, custom_field_id=field.id, entity_type="project",
            entity_id=project.id, project_id=project.id, text_value=centre))
    return field
