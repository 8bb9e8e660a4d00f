"""Every query and mutation of the schema, over real HTTP, with the arguments a careless or
hostile client sends (tests/service/schema_sweep.py: well-formed, of nothing, and at the
limits or of another JSON type where the scalar takes any): each is answered — never an HTTP 500,
never a resolver's crash ("Internal server error"), on SQLite and PostgreSQL.

The administrator of a fresh organisation calls them all, the queries first and the
mutations that end things (deleting, archiving, revoking, closing the account) last, so that
as many as possible run with a live account behind them."""

from __future__ import annotations

import json

import pytest
from graphql import GraphQLSchema

from tests.service.schema_sweep import STRATEGIES, Ids, document, variables
from tests.support import Org

# A minute of requests in one test: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow

_LAST = ("delete", "archive", "remove", "revoke", "purge", "cancel", "close", "disable",
         "deactivate", "leave", "reset")


def _order(names: list[str]) -> list[str]:
    return sorted(names, key=lambda name: (any(name.lower().startswith(word)
                                                for word in _LAST), "rganisation" in name,
                                           name))


async def _ids(org: Org) -> Ids:
    member = await org.add_member("Sam Sweep")
    made: dict[str, str] = {"person": member.id, "organisation": org.id}
    admin = org.admin.gql
    for entity, query, variables_ in (
        ("project", "mutation($n: SvcName!) { addProject(name: $n) { id } }", {"n": "Apollo"}),
        ("task", "mutation($n: SvcName!) { addTask(name: $n) { id } }", {"n": "Design"}),
        ("tagCategory", "mutation($n: SvcName!) { addTagCategory(name: $n) { id } }",
         {"n": "Teams"}),
        ("tag", "mutation($n: SvcName!) { addTag(name: $n) { id } }", {"n": "Berlin"}),
        ("absenceType", "mutation($n: SvcName!) { addAbsenceType(name: $n) { id } }",
         {"n": "Leave"}),
        ("expenseType", "mutation($n: SvcName!) { addExpenseType(name: $n) { id } }",
         {"n": "Travel"}),
        ("customField", "mutation($n: SvcName!) { addCustomField(name: $n, fieldType: "
         "\"text\") { id } }", {"n": "Code"}),
        ("timeRecord", "mutation($s: SvcTimestamp!, $p: SvcId!) { addTimeRecord(startTime: $s, "
         "duration: 3600000, personId: $p) { id } }", {"s": 1_767_607_200_000, "p": member.id}),
    ):
        data = await admin(query, variables_)
        made[entity] = next(iter(data.values()))["id"]
    return Ids(made, member.id)


async def test_every_operation_answers_hostile_arguments_without_crashing(org: Org) -> None:
    schema: GraphQLSchema = org.live.service.executor.schema
    ids = await _ids(org)
    crashes: list[str] = []
    calls = 0
    for kind, root in (("query", schema.query_type), ("mutation", schema.mutation_type)):
        assert root is not None
        for name in _order(list(root.fields)):
            field = root.fields[name]
            for strategy in STRATEGIES:
                values = variables(schema, name, field, strategy, ids)
                response = await org.http.post(
                    org.live.graphql_url,
                    json={"query": document(kind, name, field), "variables": values},
                    headers={"apikey": org.admin.apikey},
                )
                calls += 1
                text = response.text
                if response.status_code >= 500 or "Internal server error" in text:
                    crashes.append(f"{name} [{strategy}] {response.status_code}: "
                                   f"{text[:300]} <- {json.dumps(values)[:300]}")
    roots = (schema.query_type, schema.mutation_type)
    assert calls == len(STRATEGIES) * sum(len(root.fields) for root in roots if root) > 2000
    assert not crashes, f"{len(crashes)} crashed:\n" + "\n".join(crashes)
