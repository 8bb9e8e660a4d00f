"""What the embedded service deliberately does not offer (service/unsupported.py): each entry
is a field of the reference schema and none of the running one; no operation of those
products is left out of the list; README's section is generated from it; and a client that
asks for one gets GraphQL's validation error naming the field (over HTTP, SQLite and
PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

import pytest
from graphql import GraphQLObjectType, build_schema

from service.graphql.schema import build_schema as build_running
from service.unsupported import UNSUPPORTED, all_fields, readme_section, with_readme_section
from tests.service.spec_tables import REFERENCE
from tests.support import Org

ROOT = Path(__file__).resolve().parents[2]


def _reference_path() -> Path | None:
    return REFERENCE if REFERENCE.exists() else None


def _field(schema: object, dotted: str) -> object | None:
    type_name, field_name = dotted.split(".")
    found = getattr(schema, "type_map", {}).get(type_name)
    if not isinstance(found, GraphQLObjectType):
        return None
    return found.fields.get(field_name)


def test_no_entry_is_in_the_running_schema() -> None:
    running = build_running()
    listed = all_fields()
    assert len(listed) == len(set(listed)), "an entry is listed twice"
    offered = [name for name in listed if _field(running, name) is not None]
    assert offered == [], f"listed as not offered, yet in the schema: {offered}"


@pytest.mark.skipif(_reference_path() is None, reason="the reference schema is not beside "
                    "the checkout")
def test_every_entry_is_the_references_and_none_of_those_products_is_left_out() -> None:
    path = _reference_path()
    assert path is not None
    reference = build_schema(path.read_text(encoding="utf-8"))
    unknown = [name for name in all_fields() if _field(reference, name) is None]
    assert unknown == [], f"not in the reference schema: {unknown}"
    listed = set(all_fields())
    for group in UNSUPPORTED:
        for root, fields in (("Query", reference.query_type), ("Mutation",
                                                               reference.mutation_type)):
            assert fields is not None
            left_out = [f"{root}.{name}" for name in fields.fields
                        if any(word in name.lower() for word in group.keywords)
                        and f"{root}.{name}" not in listed]
            assert left_out == [], f"{group.title}: not listed {left_out}"


def test_readme_section_is_generated_from_the_list() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme_section() in readme, "README is stale: run scripts/readme_unsupported.py"
    assert with_readme_section(readme) == readme
    for group in UNSUPPORTED:
        assert group.title in readme


async def test_asking_for_one_is_the_validation_error_naming_it(org: Org) -> None:
    body = await org.admin.gql.body(
        'mutation { createIntegrationForAsana(accountId: "1", importMode: "project", '
        'defaultRole: "' + "0" * 24 + '") { id } }'
    )
    assert body.get("data") is None
    assert body["errors"][0]["message"] == (
        "Cannot query field 'createIntegrationForAsana' on type 'Mutation'."
    )
    picture = await org.admin.gql.body("{ currentPerson { id picture { url } } }")
    assert picture["errors"][0]["message"] == "Cannot query field 'picture' on type 'SvcPerson'."
    stripe = await org.admin.gql.body("{ getStripeBillingPortalURL }")
    assert "Cannot query field 'getStripeBillingPortalURL' on type 'Query'" in \
        stripe["errors"][0]["message"]
