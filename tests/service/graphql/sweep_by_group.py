"""Every query and mutation of the schema, over real HTTP, with the arguments a careless or
hostile client sends (tests/service/schema_sweep.py: well-formed, of nothing, and at the
limits or of another JSON type where the scalar takes any): each is answered — never an HTTP 500,
never a resolver's crash ("Internal server error"), on SQLite and PostgreSQL.

The administrator of a fresh organisation calls them all, the queries first and the
mutations that end things (deleting, archiving, revoking, closing the account) last, so that
as many as possible run with a live account behind them; then an employee of another
organisation calls them all with the first one's ids: refused, never a crash, and nothing of
the first organisation answered or changed for them.

The operations are shared out in GROUPS groups, each swept by its own file
(tests/service/graphql/test_schema_sweep_<group>.py, which imports the tests below and names
its group): a minute or more of requests each, in files that the suite's workers run at once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from graphql import GraphQLSchema

from tests.service.schema_sweep import STRATEGIES, Ids, document, variables
from tests.support import Member, Org, new_org

GROUPS = 3
_LAST = ("delete", "archive", "remove", "revoke", "purge", "cancel", "close", "disable",
         "deactivate", "leave", "reset")


def _order(names: list[str]) -> list[str]:
    return sorted(names, key=lambda name: (any(name.lower().startswith(word)
                                                for word in _LAST), "rganisation" in name,
                                           name))


def in_group(names: list[str], group: int) -> list[str]:
    """Every GROUPS-th of the ordered names from the `group`-th: each group has its share of
    the queries and of the mutations, the ones that end things last."""
    return _order(names)[group::GROUPS]


@pytest.fixture
def group(request: pytest.FixtureRequest) -> int:
    """The group the test's file sweeps (its GROUP)."""
    number: int = request.module.GROUP
    assert 0 <= number < GROUPS
    return number


def group_files() -> list[str]:
    return sorted(path.name for path in Path(__file__).parent.glob("test_schema_sweep_*.py"))


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


async def _sweep(org: Org, apikey: str, ids: Ids, strategies: tuple[str, ...], group: int
                 ) -> tuple[list[str], list[str]]:
    """Every root field of the group called with each strategy's arguments: (what crashed,
    what answered with data although its arguments named one of `ids`' entities)."""
    schema: GraphQLSchema = org.live.service.executor.schema
    named = set(ids.by_entity.values())
    crashes: list[str] = []
    answered: list[str] = []
    calls = 0
    for kind, root in (("query", schema.query_type), ("mutation", schema.mutation_type)):
        assert root is not None
        for name in in_group(list(root.fields), group):
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
    roots = [root for root in (schema.query_type, schema.mutation_type) if root]
    assert len(strategies) * sum(len(root.fields) for root in roots) > 1000
    assert calls == len(strategies) * sum(len(in_group(list(root.fields), group))
                                          for root in roots)
    return crashes, answered


def _has_data(body: dict[str, Any], name: str) -> bool:
    """Answered without an error or a refusal, with something (not null, empty, 0 or false)."""
    if body.get("errors") or body.get("permissionsErrors"):
        return False
    return bool((body.get("data") or {}).get(name))


async def test_every_operation_answers_hostile_arguments_without_crashing(
    org: Org, group: int
) -> None:
    ids, _member = await _ids(org)
    crashes, _answered = await _sweep(org, org.admin.apikey, ids, STRATEGIES, group)
    assert not crashes, f"{len(crashes)} crashed:\n" + "\n".join(crashes)


async def test_a_stranger_is_refused_everything_and_nothing_crashes(
    org: Org, group: int
) -> None:
    ids, _member = await _ids(org)
    stranger = await (await new_org(org.live, org.http, "Elsewhere")).add_member("Eve Else")
    crashes, answered = await _sweep(org, stranger.apikey, ids, ("plain", "absent"), group)
    assert not crashes, f"{len(crashes)} crashed:\n" + "\n".join(crashes)
    leaked = [line for line in answered if line.split(" ", 1)[0] not in _ANSWERED_TO_ANYONE]
    assert not leaked, "answered to a stranger:\n" + "\n".join(leaked)
    # (those of the two above in the group were answered: the check sees an answer when
    # there is one)
    schema = org.live.service.executor.schema
    swept = {name for root in (schema.query_type, schema.mutation_type) if root
             for name in in_group(list(root.fields), group)}
    assert {line.split(" ", 1)[0] for line in answered} == _ANSWERED_TO_ANYONE & swept, answered
