"""The read queries whose answers the release gave when its fixture was made, and head must
give the same on the upgraded databases. Each is asked with one person's own key (so every
old key is used). None reads what the upgrade test itself changes (Ezra's and Erin's pending
timesheets are decided by the test after these are compared; Ian's mail is processed by head
at any moment, so his records are not read)."""

from __future__ import annotations

from typing import Any

import httpx

from tests.upgrade.harness import graphql

WEEK1 = 1_791_158_400_000  # Monday 5 October 2026, 00:00 UTC
WEEKS = {"s": WEEK1, "e": WEEK1 + 14 * 86_400_000}
RECORDS = ("query($s: SvcTimestamp, $e: SvcTimestamp, $p: SvcId) { getTimeRecords(startTime: $s,"
           " endTime: $e, filter: [{personId: $p}]) { id startTime { ts } endTime { ts } duration"
           " comment nonBillable projects { id name } task { id name } person { id } } }")
EVENTS = ("query($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) { getApprovalEvents("
          "personId: $p, startTime: $s, endTime: $e) { id submitId status ts { ts }"
          " startTime { ts } endTime { ts } by { id } } }")
# (name, who asks, query, variables: names of people whose id fills $p, else fixed values)
QUERIES: list[tuple[str, str, str, dict[str, Any]]] = [
    *[(f"me-{who}", who, "{ currentPerson { id name email role { name } } }", {})
      for who in ("ada", "mia", "max", "eve", "emil", "erin", "ezra", "ian")],
    ("persons", "ada", "{ getPersons { id name email role { name }"
     " relations { managedBy { value { id } } } } }", {}),
    ("projects", "ada", "{ getProjects { id name parent { id } } }", {}),
    ("tasks", "ada", "{ getTasks { id name } }", {}),
    ("tags", "ada", "{ getTags { id name } }", {}),
    ("custom-fields", "ada", "{ getCustomFields { id name fieldType } getCustomFieldValues {"
     " id customFieldId entityType textValue tag { id } } }", {}),
    ("webhooks", "ada", "{ currentOrganisation { id name integrations { webhooks { id name url"
     " secret events } } } }", {}),
    *[(f"records-{who}", who, RECORDS, {**WEEKS, "p": who}) for who in ("eve", "emil")],
    *[(f"events-{who}", "ada", EVENTS, {**WEEKS, "p": who}) for who in ("eve", "emil")],
    ("journal", "erin", "query($r: SvcReferenceInput!) { getMessages(of: $r) { id type kind"
     " content author { id } } }", {"r": "journal"}),
]


def _variables(wanted: dict[str, Any], people: dict[str, dict[str, str]],
               structure: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, value in wanted.items():
        if name == "p":
            found[name] = people[value]["id"]
        elif value == "journal":
            found[name] = structure["journal"]
        else:
            found[name] = value
    return found


def _ours(answer: dict[str, Any]) -> dict[str, Any]:
    """timebot's own subscription names the port the server ran on: only the operator's
    webhook ("ops") is compared."""
    organisation = (answer.get("data") or {}).get("currentOrganisation")
    if organisation:
        hooks = organisation["integrations"]["webhooks"]
        organisation["integrations"]["webhooks"] = [h for h in hooks if h["name"] == "ops"]
    return answer


async def answers(http: httpx.AsyncClient, base: str, people: dict[str, dict[str, str]],
                  structure: dict[str, Any]) -> dict[str, Any]:
    """Every query's whole answer (data and errors), by name."""
    found = {}
    for name, who, query, wanted in QUERIES:
        body = await graphql(http, base, people[who]["apikey"], query,
                             _variables(wanted, people, structure))
        found[name] = _ours(body)
    return found
