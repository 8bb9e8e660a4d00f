"""Every query and mutation of the schema, over real HTTP, with the arguments a careless or
hostile client sends (tests/service/schema_sweep.py: well-formed, of nothing, and at the
limits or of another JSON type where the scalar takes any): each is answered — never an HTTP 500,
never a resolver's crash ("Internal server error"), on SQLite and PostgreSQL.

The administrator of a fresh organisation calls them all, the queries first and the
mutations that end things (deleting, archiving, revoking, closing the account) last, so that
as many as possible run with a live account behind them; then an employee of another
organisation calls them all with the first one's ids: refused, never a crash, and nothing of
the first organisation answered or changed for them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from graphql import GraphQLSchema

from tests.service.schema_sweep import STRATEGIES, Ids, document, variables
from tests.support import Member, Org, new_org

# A minute of requests in one test: started first (tests/conftest.py), not left for the end.
pytestmark = pytest.mark.slow

_LAST = ("delete", "archive", "remove", "revoke", "purge", "cancel", "close", "disable",
         "deactivate", "leave", "reset")


def _order(names: list[str]) -> list[str]:
    return sorted(names, key=lambda name: (any(name.lower().startswith(word)
                                                for word in _LAST), "rganisation" in name,
                                           name))


async def _ids(org: Org) -> tuple[Ids, Member]:
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
    return Ids(made, member.id), member


# Answered for a stranger whatever ids they name: signing in is asked before any key (the
# account's id is public), and marking notifications read touches the caller's own only.
_ANSWERED_TO_ANYONE = {"requestSignin", "markNotificationsRead"}


async def _sweep(org: Org, apikey: str, ids: Ids, strategies: tuple[str, ...]
                 ) -> tuple[list[str], list[str]]:
    """Every root field called with each strategy's arguments: (what crashed, what answered
    with data although its arguments named one of `ids`' entities)."""
    schema: GraphQLSchema = org.live.service.executor.schema
    named = set(ids.by_entity.values())
    crashes: list[str] = []
    answered: list[str] = []
    calls = 0
    for kind, root in (("query", schema.query_type), ("mutation", schema.mutation_type)):
        assert root is not None
        for name in _order(list(root.fields)):
            field = root.fields[name]
            for strategy in strategies:
                values = variables(schema, name, field, strategy, ids)
                response = await org.http.post(
                    org.live.graphql_url,
                    json={"query": document(kind, name, field), "variables": values},
                    headers={"apikey": apikey},
                )
                calls += 1
                text = response.text
                sent = json.dumps(values)
                if response.status_code >= 500 or "Internal server error" in text:
                    crashes.append(f"{name} [{strategy}] {response.status_code}: "
                                   f"{text[:300]} <- {sent[:300]}")
                elif _has_data(response.json(), name) and any(i in sent for i in named):
                    answered.append(f"{name} [{strategy}]: {text[:200]} <- {sent[:200]}")
    roots = (schema.query_type, schema.mutation_type)
    assert calls == len(strategies) * sum(len(root.fields) for root in roots if root) > 1000
    return crashes, answered


def _has_data(body: dict[str, Any], name: str) -> bool:
    """Answered without an error or a refusal, with something (not null, empty, 0 or false)."""
    if body.get("errors") or body.get("permissionsErrors"):
        return False
    return bool((body.get("data") or {}).get(name))


async def test_every_operation_answers_hostile_arguments_without_crashing(org: Org) -> None:
    ids, _member = await _ids(org)
    crashes, _answered = await _sweep(org, org.admin.apikey, ids, STRATEGIES)
    assert not crashes, f"{len(crashes)} crashed:\n" + "\n".join(crashes)


async def test_a_stranger_is_refused_everything_and_nothing_crashes(org: Org) -> None:
    ids, _member = await _ids(org)
    stranger = await (await new_org(org.live, org.http, "Elsewhere")).add_member("Eve Else")
    crashes, answered = await _sweep(org, stranger.apikey, ids, ("plain", "absent"))
    assert not crashes, f"{len(crashes)} crashed:\n" + "\n".join(crashes)
    leaked = [line for line in answered if line.split(" ", 1)[0] not in _ANSWERED_TO_ANYONE]
    assert not leaked, "answered to a stranger:\n" + "\n".join(leaked)
    # (the two above were answered: the check sees an answer when there is one)
    assert {line.split(" ", 1)[0] for line in answered} == _ANSWERED_TO_ANYONE, answered
