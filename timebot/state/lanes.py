"""The two lanes of a queue where a person waiting and the organisation's bulk work meet (the
outbox, the Slack sender): a row is INTERACTIVE (a receipt, a refusal, an outcome, an answer
to someone who just acted) or BULK (review fan-outs, reminders, digests, reports).

A claim takes the interactive rows that are due first and fills the rest of its batch with
bulk ones, keeping at least one place for a bulk row when any is due (`timebot.state.queue`):
a person never waits behind a fan-out, and a steady stream of interactive work never starves
the bulk lane."""

from __future__ import annotations

from typing import Any

from sqlalchemy import SmallInteger
from sqlalchemy.orm import mapped_column

INTERACTIVE = 0
BULK = 1


def lane_column() -> Any:
    """The `priority` column: INTERACTIVE by default, also on the server (a row inserted by
    a release that knows no lanes, while a deployment rolls, is not held back)."""
    return mapped_column(SmallInteger, default=INTERACTIVE, server_default=str(INTERACTIVE))


def priority_of(bulk: bool) -> int:
    return BULK if bulk else INTERACTIVE
