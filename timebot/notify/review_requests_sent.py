"""Which review requests timebot has sent, read for a whole organisation's pending work at once
(the reconciler's pass): a bounded number of statements however many timesheets wait, each a
seek on an index, never a scan of the outbox.

A request is (submission, stage, approver). It was mailed when the outbox holds its key
(`review:<submit>:<stage>:<approver>`) or a restarted round's (`<key>:r<ms>`); posted when
Slack's queue holds an approval DM with its ref. The keys are looked up in IN lists
(plumbing.in_lists);
the restarted rounds only for the keys not found of approvers who do not read the digest (in
practice the requests about to be sent), by ranges (`key:r` ≤ dedupe_key < `key:s`:
plumbing.prefixes), which the unique index answers on SQLite and PostgreSQL alike (a LIKE
prefix does not: SQLite's LIKE ignores case, PostgreSQL's needs a pattern index). Under a
linguistic collation a range may hold other keys too: what it returns is checked against the
prefix here."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from plumbing.in_lists import in_lists
from plumbing.prefixes import prefix_range
from timebot.notify.approvals import digest_readers
from timebot.notify.ground import Ground
from timebot.notify.reviews import review_dedupe_key
from timebot.state.dedupe_keys import present_keys
from timebot.state.models import OutboxMessage, SlackOutgoing

# Events accepted per write transaction (short ones).
CHUNK = 500
SLACK_POST = "chat.postMessage"
ROUND_MARK = ":r"

Request = tuple[str, int, str]  # (submission, stage, approver)


def slack_ref(submit_id: str, stage: int, approver_id: str) -> str:
    """The ref the Slack half gives an approval DM (bot.slack.approval_blocks.ref_of)."""
    return f"approval:{submit_id}:{stage}:{approver_id}"


async def unrequested(
    runtime: Ground, organisation_id: str, requests: Iterable[Request]
) -> set[Request]:
    """The requests not made of their approver on every channel timebot serves them on: not
    mailed (unless the approver reads the daily digest instead), or, when Slack is
    configured, not posted."""
    mail_keys = {review_dedupe_key(*request): request for request in requests}
    async with runtime.read_sessions() as session:
        mailed = await present_keys(session, OutboxMessage.dedupe_key, mail_keys)
        unmailed = {key: request for key, request in mail_keys.items() if key not in mailed}
        digest = set[str]()
        for approvers in in_lists(approver for _s, _t, approver in unmailed.values()):
            digest |= await digest_readers(session, organisation_id, approvers)
        # A digest reader counts as asked whether mailed or not: their restarted rounds (the
        # dearer look-up) are not looked for.
        instant = [key for key, request in unmailed.items() if request[2] not in digest]
        in_a_round = await _mailed_in_a_restarted_round(session, instant)
        missing = {unmailed[key] for key in instant if key not in in_a_round}
        if not runtime.settings.slack_bot_token:
            return missing
        refs = {slack_ref(*request): request for request in mail_keys.values()
                if request not in missing}
        posted = await _posted(session, list(refs))
    return missing | {request for ref, request in refs.items() if ref not in posted}


async def _mailed_in_a_restarted_round(session: AsyncSession, keys: list[str]) -> set[str]:
    """Those of these review keys whose restarted round's key (`key:r<ms>`) the outbox holds."""
    found: set[str] = set()
    for chunk in in_lists(keys):
        wanted = set(chunk)
        rounds = await session.scalars(select(OutboxMessage.dedupe_key).where(or_(*(
            prefix_range(OutboxMessage.dedupe_key, key + ROUND_MARK) for key in chunk))))
        for round_key in rounds:
            found.update(_keys_of_round(round_key or "", wanted))
    return found


def _keys_of_round(round_key: str, wanted: set[str]) -> Iterator[str]:
    """The wanted keys that `round_key` is a restarted round of (starts with `key:r`)."""
    at = round_key.find(ROUND_MARK)
    while at != -1:
        if round_key[:at] in wanted:
            yield round_key[:at]
        at = round_key.find(ROUND_MARK, at + 1)


async def _posted(session: AsyncSession, refs: list[str]) -> set[str]:
    """Those of these refs that name an approval DM in Slack's queue."""
    found: set[str] = set()
    for chunk in in_lists(refs):
        found.update(ref for ref in await session.scalars(
            select(SlackOutgoing.ref).where(
                SlackOutgoing.ref.in_(chunk), SlackOutgoing.method == SLACK_POST))
            if ref is not None)
    return found
