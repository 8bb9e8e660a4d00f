"""The embedded service's account upkeep, run by the process that embeds it: the service's
own mail (account notices) handed to the outbound mail, and organisations whose deletion
grace period has ended purged.

Both are safe in several processes at once: a mail row is queued under its own id as the
outbox's dedupe key before it is marked handed (so a crash between the two queues nothing
twice), and a purge of an organisation another process purged first finds nothing to do.
"""

from __future__ import annotations

from email.message import EmailMessage
from email.utils import formataddr

import structlog
from sqlalchemy import select, update

from mail.queues.outbox import Outbox, new_message
from plumbing.db import unit_of_work
from service.embedded import EmbeddedService
from service.organisation.account_life import AccountLifeError, due_for_purge, purge_organisation
from service.organisation.account_models import ServiceMail
from timebot.config import Settings
from timebot.process.runtime import Runtime
from timebot.state.queue import FAILED
from timebot.state.retry import Backoff, after_failure
from timebot.state.worker import PollingWorker

log = structlog.get_logger("shell.account_upkeep")

BATCH = 200
OUTBOX_CHUNK = 25  # rows a transaction of the outbox
MAIL_BACKOFF = Backoff(5_000, 300_000)
MAIL_ATTEMPTS = 3
"""A service mail row that cannot be made into a message this often is set aside."""


class AccountUpkeep(PollingWorker):
    name = "account-upkeep"

    def __init__(
        self, service: EmbeddedService, outbox: Outbox, settings: Settings, poll_seconds: float
    ) -> None:
        super().__init__(poll_seconds)
        self.service = service
        self.outbox = outbox
        self.settings = settings

    async def run_once(self) -> int:
        return await self.hand_over_mail() + await self.purge_due()

    async def hand_over_mail(self) -> int:
        """Queue each due row in the outbox and mark it handed. A row that cannot be made into
        a message (its own cause: e.g. a name with a line break, written before names refused
        them) is tried again after a backoff, then set aside with its reason (`failed_ms`,
        `last_error`), and the rows behind it go on. A failure to queue (the bot's database)
        is not the row's: the pass stops and the next poll tries again."""
        now = self.service.clock.now_ms()
        async with self.service.sessions() as session:
            rows = list(
                await session.scalars(
                    select(ServiceMail)
                    .where(ServiceMail.handed_ms.is_(None), ServiceMail.next_attempt_ms <= now)
                    .order_by(ServiceMail.created_ms)
                    .limit(BATCH)
                )
            )
        rendered: list[tuple[ServiceMail, EmailMessage]] = []
        for row in rows:
            try:
                message = new_message(
                    mail_from=self.settings.mail_from,
                    to=formataddr((row.to_name, row.to_address)),
                    subject=row.subject,
                    text=row.body,
                    mail_domain=self.settings.mail_domain,
                    headers={"Auto-Submitted": "auto-generated"},
                )
            except Exception as error:  # the row's own: the others go on
                await self._not_rendered(row, error)
                continue
            rendered.append((row, message))
        if not rendered:
            return len(rows)
        # Queued a few at a time (the outbox's write lock held a few ms, not for an
        # invitation of a large organisation), then the batch marked handed: a pass cut
        # short queues the rest next time, each row once (its dedupe key).
        for start in range(0, len(rendered), OUTBOX_CHUNK):
            async with unit_of_work(self.outbox.sessions) as outbox_session:
                for row, message in rendered[start:start + OUTBOX_CHUNK]:
                    await self.outbox.enqueue(
                        message,
                        kind="account",
                        envelope_from=self.settings.mail_from,
                        dedupe_key=f"service-mail:{row.id}",
                        session=outbox_session,
                    )
        async with unit_of_work(self.service.sessions) as session:
            await session.execute(
                update(ServiceMail)
                .where(ServiceMail.id.in_([row.id for row, _message in rendered]))
                .values(handed_ms=self.service.clock.now_ms())
            )
        return len(rows)

    async def _not_rendered(self, row: ServiceMail, error: Exception) -> None:
        now = self.service.clock.now_ms()
        reason = f"{type(error).__name__}: {error}"
        outcome = after_failure(attempts=row.attempts + 1, failures=row.attempts,
                                temporary=False, now_ms=now, backoff=MAIL_BACKOFF,
                                max_failures=MAIL_ATTEMPTS)
        values: dict[str, object] = {"attempts": outcome.failures, "last_error": reason,
                                     "next_attempt_ms": outcome.next_attempt_ms}
        if outcome.status == FAILED:
            values.update(handed_ms=now, failed_ms=now)
            log.error("service_mail_failed_for_good", id=row.id, organisation=row.organisation_id,
                      to=row.to_address, subject=row.subject, reason=reason,
                      attempts=outcome.failures)
        else:
            log.warning("service_mail_not_rendered", id=row.id, reason=reason,
                        attempts=outcome.failures, retry_in_ms=outcome.next_attempt_ms - now)
        async with unit_of_work(self.service.sessions) as session:
            await session.execute(
                update(ServiceMail).where(ServiceMail.id == row.id).values(values))

    async def purge_due(self) -> int:
        now = self.service.clock.now_ms()
        async with self.service.sessions() as session:
            due = await due_for_purge(session, now)
        for org_id in due:
            try:
                async with unit_of_work(self.service.sessions) as session:
                    await purge_organisation(session, org_id, now)
            except AccountLifeError:
                continue  # cancelled or purged by another process meanwhile
            log.info("organisation_purged", organisation=org_id)
        return len(due)


def install_account_upkeep(
    runtime: Runtime, service: EmbeddedService | None, outbox: Outbox,
    poll_seconds: float = 5.0,
) -> None:
    """Runs beside an embedded service only: a hosted service sends its own mail."""
    if service is None:
        return
    upkeep = AccountUpkeep(service, outbox, runtime.settings, poll_seconds)
    # A sign-in code is handed to the outbox at once, not at the next poll.
    service.executor.signin.mail_hooks.append(upkeep.wake)

    # One process at a time (timebot/state/singleton.py): both parts are safe in several, but
    # would do their reads twice.
    runtime.singletons.add("account-upkeep", upkeep.start, upkeep.stop)
