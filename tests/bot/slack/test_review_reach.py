"""A review DM reaches its approver as their own settings say (bot.chat.reach): an approver who
turned push off gets no DM (their e-mail still goes), the other reads it in their language;
each approver's push switch and language are one read of the service, not one each."""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

import pytest
from graphql import print_ast

from bot.slack.review_dms import ReviewDMs
from tests.bot.slack.harness import SlackHarness
from tests.bot.slack.test_approvals import person_stages
from tests.bot.slack.test_l10n_nudges import speaks
from tests.bot.slack.test_push_off import push_off
from tests.bot.slack.test_review_dispatch import all_dispatched, posts_to, quiet, runtime_of
from tests.mail.reviews_support import outbox_rows, wait_for
from tests.service.test_approvals_support import add_record, submit
from timebot.client import TYPE_FIELDS  # the schema's introspection, once per client
from timebot.notify.decisions import ReviewRequest
from timebot.process.notifications import jobs_of

ASKING: ContextVar[str | None] = ContextVar("asking", default=None)  # the approver DMed now


async def test_push_off_sends_no_dm_and_the_other_reads_theirs_in_german(
    h: SlackHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = runtime_of(h)
    reads: dict[str, list[str]] = {}  # approver -> the operations their review DM sent
    execute = runtime.client.execute

    async def recording(query: Any, variables: Mapping[str, Any] | None = None,
                        **kwargs: Any) -> Any:
        if (approver := ASKING.get()) is not None and query is not TYPE_FIELDS:
            text = query if isinstance(query, str) else print_ast(query.document)
            reads.setdefault(approver, []).append(text.split("(")[0].split()[-1])
        return await execute(query, variables, **kwargs)

    [dms] = [c for c in jobs_of(runtime).reviews.channels if isinstance(c, ReviewDMs)]
    review_request = dms.review_request

    async def asking(request: ReviewRequest) -> bool:
        token = ASKING.set(request.approver_id)
        try:
            return await review_request(request)
        finally:
            ASKING.reset(token)

    owner = await h.slack_member("Sam")
    dan, quinn = await h.slack_member("Dan"), await h.slack_member("Quinn")
    await speaks(h, dan, "de")
    await push_off(quinn)
    await person_stages(h, owner, [dan, quinn])
    await add_record(owner.member, owner.member, day=0, hours=3)
    monkeypatch.setattr(runtime.client, "execute", recording)
    monkeypatch.setattr(dms, "review_request", asking)
    event = await submit(owner.member, owner.member)

    [dm] = await h.fake.wait_for("chat.postMessage", channel=dan.slack_id)
    buttons = [element["text"]["text"] for block in dm.args["blocks"]
               for element in block.get("elements") or [] if element.get("type") == "button"]
    assert "Genehmigen" in buttons
    await wait_for(lambda: outbox_rows(runtime, quinn.member.email, "review"),
                   what="the e-mail of the approver with push off")
    await all_dispatched(runtime, event["id"])
    await quiet(h)
    assert posts_to(h, quinn) == 0
    assert reads == {dan.id: ["ChatReach"], quinn.id: ["ChatReach"]}
