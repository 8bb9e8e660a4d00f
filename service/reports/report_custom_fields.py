"""runInlineReport's custom-field accumulators (attributes.customFields): for each requested
field, the values its time records hold, accumulated per row.

How a field accumulates follows its type (the one table below): a number field sums its
values, exactly (decimal), rounded to the nearest whole number at the end, halves away from
zero (the reference's accumulator value is an Int); a boolean field counts the records whose
value is true; a text, date, date-time or URL field counts the records that hold a value.

A requested field must exist in the organisation and be one the caller may list (the
settings permission, or "Who has access?"): otherwise it is refused, naming its id.
`findOn` may be `time` (the default: the values on the time records themselves);
`accumulate: false` (a per-record column, which this report does not show) is refused.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from sqlalchemy import select

from service.custom_fields import listable_field_ids
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.models import CustomField, CustomFieldValue, TimeRecord

SUM, TRUE, PRESENT = "sum", "true", "present"
# field type -> (the value's column, how its values accumulate)
ACCUMULATION: dict[str, tuple[str, str]] = {
    "number": ("number_value", SUM),
    "boolean": ("boolean_value", TRUE),
    "text": ("text_value", PRESENT),
    "date": ("date_value", PRESENT),
    "datetime": ("date_time_value", PRESENT),
    "url": ("url_value", PRESENT),
}
FIND_ON = ("time",)


def contribution(field_type: str, value: Any) -> Decimal:
    """What one record's stored value adds to its field's accumulator (pure)."""
    column, how = ACCUMULATION.get(field_type, ("text_value", PRESENT))
    stored = getattr(value, column)
    if how == SUM:
        return Decimal(repr(float(stored))) if stored is not None else Decimal(0)
    if how == TRUE:
        return Decimal(1 if stored is True else 0)
    return Decimal(0 if stored is None or stored == "" else 1)


def whole(total: Decimal) -> int:
    return int(total.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def requested(attributes: Mapping[str, Any]) -> list[str]:
    """The ids of attributes.customFields, in order, checked without reading anything."""
    ids: list[str] = []
    for index, item in enumerate(attributes.get("customFields") or []):
        where = f"attributes.customFields[{index}]"
        if item is None:
            raise BadInput(where, "must be an object, not null")
        field_id = item.get("customFieldId")
        if not field_id:
            raise BadInput(f"{where}.customFieldId", "name the custom field to accumulate")
        find_on = item.get("findOn")
        if find_on is not None and find_on not in FIND_ON:
            raise BadInput(f"{where}.findOn", f"this report accumulates the values on time "
                           f"records (findOn: time), not on {find_on!r}")
        if item.get("accumulate") is False:
            raise BadInput(f"{where}.accumulate", "this report only accumulates custom "
                           "fields; per-record columns are not supported")
        if field_id in ids:
            raise BadInput(f"{where}.customFieldId", f"custom field {field_id!r} is "
                           "requested twice")
        ids.append(str(field_id))
    return ids


@dataclass
class Accumulators:
    """The requested fields' types and their values per time record; `add` sums a record
    into its row, `row` gives the row's accumulators in the requested order."""

    field_types: dict[str, str] = field(default_factory=dict)
    values: dict[str, list[CustomFieldValue]] = field(default_factory=dict)
    totals: dict[Hashable, dict[str, Decimal]] = field(default_factory=dict)

    def add(self, group: Hashable, record_id: str) -> None:
        if not self.field_types:
            return
        row = self.totals.setdefault(group, {})
        for value in self.values.get(record_id, ()):
            kind = self.field_types[value.custom_field_id]
            row[value.custom_field_id] = (row.get(value.custom_field_id, Decimal(0))
                                          + contribution(kind, value))

    def row(self, group: Hashable) -> list[dict[str, Any]]:
        row = self.totals.get(group, {})
        return [{"id": field_id, "value": whole(row.get(field_id, Decimal(0)))}
                for field_id in self.field_types]


async def load(context: RequestContext, field_ids: Sequence[str], start_ms: int,
               end_ms: int) -> Accumulators:
    """The fields (refused by id when unknown or hidden from the caller) and the values of
    the time records starting in [start_ms, end_ms)."""
    if not field_ids:
        return Accumulators()
    found = {f.id: f for f in await context.session.scalars(select(CustomField).where(
        CustomField.organisation_id == context.org_id, CustomField.id.in_(list(field_ids))))}
    allowed = await listable_field_ids(context)
    for index, field_id in enumerate(field_ids):
        where = f"attributes.customFields[{index}].customFieldId"
        if field_id not in found:
            raise BadInput(where, f"no custom field with id {field_id!r}")
        if allowed is not None and field_id not in allowed:
            raise BadInput(where, f"you have no access to the custom field {field_id!r}")
    accumulators = Accumulators({i: found[i].field_type for i in field_ids})
    statement = (
        select(CustomFieldValue)
        .join(TimeRecord, TimeRecord.id == CustomFieldValue.time_record_id)
        .where(CustomFieldValue.organisation_id == context.org_id,
               CustomFieldValue.entity_type == "timeRecord",
               CustomFieldValue.custom_field_id.in_(list(field_ids)),
               TimeRecord.organisation_id == context.org_id,
               TimeRecord.start_ms >= start_ms, TimeRecord.start_ms < end_ms)
    )
    for value in await context.session.scalars(statement):
        if value.time_record_id is not None:
            accumulators.values.setdefault(value.time_record_id, []).append(value)
    return accumulators
