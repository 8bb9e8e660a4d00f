"""Refusals name what came and what was wanted as GraphQL writes values (#43): "got the text
'24'" where a number is wanted, "got null" rather than Python's `None`. One case per message
fixed, each through POST /graphql on both databases; and `service/value_words.py` as pure
functions."""

from __future__ import annotations

from typing import Any

import pytest

from service.value_words import choice_problem, described
from tests.support import Org

TIME_FORMAT = ("mutation($v: SvcTimeFormat) { editOrganisationLocalisationTimeFormat("
               "timeFormat: $v) { id } }")
DURATION_FORMAT = ("mutation($v: Int) { editOrganisationTimeSettingsDurationFormat("
                   "durationFormat: $v) { id } }")
REPORT = ("query($r: [SvcRecordType]!) { runInlineReport(records: $r, period: {target: "
          "last12Months}, attributes: {person: true}) { error } }")
STAGES = ("mutation($s: [SvcApprovalStageInput]) { editOrganisationApprovalStages(stages: $s)"
          " { id } }")
TYPES = ("query($t: SvcType!, $id: SvcId!) { getMessages(entityType: $t, entityId: $id) "
         "{ id } }")

CASES: list[tuple[str, str, dict[str, Any], str]] = [
    ("a text where the clock's number is wanted", TIME_FORMAT, {"v": "24"},
     'Invalid argument "timeFormat": must be a number, one of 12, 24, got the text \'24\''),
    ("a number out of the choices", DURATION_FORMAT, {"v": 5},
     'Invalid argument "durationFormat": must be one of 0, 1, 2, got the number 5'),
    ("null among a report's record types", REPORT, {"r": ["time", None]},
     'Invalid argument "records[1]": must be a text, one of time, absence, expense, got null'),
    ("a number as a report's record type", REPORT, {"r": [7]},
     'Invalid argument "records[0]": must be a text, one of time, absence, expense, '
     'got the number 7'),
    ("a number as an approval stage's type", STAGES, {"s": [{"type": 3}]},
     "must be a text, one of "),
]


@pytest.mark.parametrize(("why", "query", "variables", "expected"), CASES,
                         ids=[case[0] for case in CASES])
async def test_the_refusal_names_the_type_that_came(org: Org, why: str, query: str,
                                                    variables: dict[str, Any],
                                                    expected: str) -> None:
    message = await org.admin.gql.error(query, variables)
    assert expected in message, (why, message)
    assert "None" not in message and "got '" not in message, message


def test_values_as_graphql_writes_them() -> None:
    assert described(None) == "null"
    assert described(True) == "the boolean true"
    assert described("x" * 100) == "the text '" + "x" * 60 + "…'"
    assert described([1, 2]) == "a list of 2"
    assert choice_problem((12, 24), 36) == "must be one of 12, 24, got the number 36"
    assert choice_problem((12, 24), True) == (
        "must be a number, one of 12, 24, got the boolean true")
