"""The scheduled sends of bench.scale at both sizes: the end-of-period reminders and the daily
digests, as `timebot reminders send --org ID --at TIME` queues them and hands them to the
outbox (the scheduler's own passes, in a process of their own, on the seeded databases while
no `timebot serve` runs):

- scale_period_reminder_cpu: CPU ms per reminder of a run at Monday 16 March 2026 07:00 UTC,
  when the reminder of the week after the submitted one is due for everyone (no digest yet:
  they are due from 08:00); the count must be every active person of the organisation;
- scale_digest_cpu: CPU ms per digest of a run at 09:30 the same day, when every approver's
  digest is due (each approver reads the digest: set for the run), the period pass of that run
  finding its reminders already sent; the count must be every approver.

Each figure is the run's CPU (the command's process, from /proc's account of the waited child)
less that of a run that only starts and stops (an unknown organisation; the cheaper of two):
the start-up of a command is no one's share. The organisation is made to look served since
before the week (`scheduler_epochs`: a timebot that has served it a year would have), and its
digest choices and epoch are put back afterwards, so that the fronts' start that follows
sends nothing.
"""

from __future__ import annotations

import resource
import subprocess
from pathlib import Path
from typing import Any

from sqlalchemy import delete, func, select, update

from bench.common import note
from bench.scale_seed import WEEK, Org
from bench.serve import timebot_command
from plumbing.db import create_engine, session_factory, unit_of_work
from timebot.state.models import NotificationPreference, OutboxMessage, SchedulerEpoch

REMINDERS_AT = "2026-03-16T07:00:00+00:00"  # the week of 9 March ended 7 h ago
DIGESTS_AT = "2026-03-16T09:30:00+00:00"  # every digest due from 08:00 UTC


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _send(env: dict[str, str], org_id: str, at: str, log: Path) -> tuple[float, str]:
    """CPU seconds of one `timebot reminders send`, and what it printed."""
    before = _child_cpu()
    done = subprocess.run(timebot_command("reminders", "send", "--org", org_id, "--at", at),
                          env=env, capture_output=True, text=True, timeout=3600)
    spent = _child_cpu() - before
    with log.open("a") as out:
        out.write(f"$ reminders send --org {org_id} --at {at}\n{done.stdout}{done.stderr}\n")
    return spent, done.stdout + done.stderr


async def outbox_count(state: Any, kind: str) -> int:
    """How many mails of this kind timebot's outbox holds (its state database's engine)."""
    async with session_factory(state)() as session:
        return int(await session.scalar(select(func.count()).select_from(OutboxMessage)
                                         .where(OutboxMessage.kind == kind)) or 0)


async def scheduled_figures(env: dict[str, str], state_url: str, org: Org,
                            approvers: list[str], people: int, log: Path) -> dict[str, float]:
    state = create_engine(state_url)
    sessions = session_factory(state)
    try:
        async with unit_of_work(sessions) as session:
            epoch = await session.scalar(select(SchedulerEpoch.first_seen_ms).where(
                SchedulerEpoch.organisation_id == org.org_id))
            if epoch is None:
                session.add(SchedulerEpoch(organisation_id=org.org_id, first_seen_ms=WEEK))
            else:
                await session.execute(update(SchedulerEpoch).where(
                    SchedulerEpoch.organisation_id == org.org_id).values(first_seen_ms=WEEK))
            session.add_all(NotificationPreference(
                organisation_id=org.org_id, person_id=approver, mode="digest", updated_ms=WEEK)
                for approver in approvers)
        start_ups = [_send(env, "no-such-organisation", REMINDERS_AT, log) for _ in range(2)]
        if any("no such organisation" not in said for _cpu, said in start_ups):
            raise RuntimeError(f"the start-up run: {start_ups[-1][1][-500:]}")
        start_up = min(cpu for cpu, _said in start_ups)  # the cheaper: subtract no more than it
        before = await outbox_count(state, "timesheet-reminder")
        reminders_cpu, said = _send(env, org.org_id, REMINDERS_AT, log)
        reminders = await outbox_count(state, "timesheet-reminder") - before
        if reminders != people or await outbox_count(state, "digest"):
            raise RuntimeError(f"{reminders} period reminders for {people} people, "
                               f"{await outbox_count(state, 'digest')} digests: {said[-500:]}")
        digests_cpu, said = _send(env, org.org_id, DIGESTS_AT, log)
        digests = await outbox_count(state, "digest")
        if digests != len(approvers):
            raise RuntimeError(f"{digests} digests for {len(approvers)} approvers: {said[-500:]}")
        async with unit_of_work(sessions) as session:
            await session.execute(delete(NotificationPreference).where(
                NotificationPreference.organisation_id == org.org_id))
            put_back = update(SchedulerEpoch).values(first_seen_ms=epoch) if epoch is not None \
                else delete(SchedulerEpoch)
            await session.execute(put_back.where(SchedulerEpoch.organisation_id == org.org_id))
    finally:
        await state.dispose()
    note(f"{org.people} people: reminders send: start-up {start_up * 1000:.0f} ms CPU, "
         f"{reminders} period reminders {reminders_cpu * 1000:.0f} ms, {digests} digests "
         f"{digests_cpu * 1000:.0f} ms")
    return {"scale_period_reminder_cpu": (reminders_cpu - start_up) * 1000 / reminders,
            "scale_digest_cpu": (digests_cpu - start_up) * 1000 / digests}
