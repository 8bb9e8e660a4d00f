"""The GraphQL operations of the one-click links (web/links.py)."""

from __future__ import annotations

from timebot.client import operation

APPROVE = operation(
    "mutation LinkApprove($id: SvcId!) { approveTimesheet(id: $id) { id status stage } }"
)
REJECT = operation(
    """mutation LinkReject($id: SvcId!, $stage: Int!, $comment: String!) {
      rejectTimesheet(id: $id, stage: $stage, comment: $comment) { id status stage }
    }"""
)
SUBMIT = operation(
    """mutation LinkSubmit($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) {
      submitTimesheet(personId: $p, startTime: $s, endTime: $e) { id status stage }
    }"""
)
ACTIVE = operation("query LinkPerson($id: SvcId!) { getPerson(id: $id) { id archived } }")
STATE = operation(
    """query LinkState($p: SvcId!, $s: SvcTimestamp!, $e: SvcTimestamp!) {
      getApprovalState(personId: $p, startTime: $s, endTime: $e) { status currentStage }
    }"""
)
