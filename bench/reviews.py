"""Review-request e-mail composition (the pure part of every review request, reminder and
digest item):

- reviews_render: median µs to render one review request from its templates (a week of 40
  entries: by day, by project, comments, changes since a rejection), sign its three tokens
  and build the MIME message, beside building the same MIME message from already rendered
  text and HTML (the baseline: what any mailer pays).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from pathlib import Path

from bench.busy import busy_machine
from bench.common import Figure, median, note
from mail.outbound.reviews import build_message, prefs_url, review_links
from mail.outbound.templating import MailTemplates
from mail.queues.outbox import new_message
from timebot.config import load_settings
from timebot.notify.approvals import period_label
from timebot.summary import summarise

FIGURES = ("reviews_render",)
WEEK = 1_791_158_400_000
HOUR = 3_600_000


def _summary() -> object:
    person = {"id": "a" * 24, "name": "Olive Owner", "email": "olive@example.com",
              "localisation": {"timeZone": {"value": "Europe/Berlin"}}}
    records = [
        {"id": f"{n:024x}", "duration": HOUR, "comment": f"work item {n}" if n % 3 else "",
         "startTime": {"ts": WEEK + (n % 5) * 24 * HOUR + 8 * HOUR + n * 60_000},
         "projects": [{"id": "p", "name": f"Project {n % 4}"}], "task": None,
         "absence": {"id": "x", "name": "Holiday"} if n == 39 else None}
        for n in range(40)
    ]
    changes = {"added": [f"{n:024x}" for n in range(3)], "modified": [], "deleted": ["f" * 24]}
    return summarise(person, records, changes, WEEK, WEEK + 7 * 24 * HOUR)


def _time(action: Callable[[], object], rounds: int = 300) -> float:
    samples = []
    with busy_machine():
        for _ in range(rounds):
            started = time.perf_counter()
            action()
            samples.append((time.perf_counter() - started) * 1e6)
    return median(samples)


def run(names: set[str]) -> list[Figure]:
    settings = load_settings({"TIMEBOT_DATA_DIR": str(Path("/tmp/timebot-bench-reviews")),
                              "TIMEBOT_SECRET_KEY": secrets.token_urlsafe(48)})
    templates = MailTemplates(None)
    summary = _summary()

    def render() -> bytes:
        links = review_links(settings, "b" * 24, "c" * 24, 0, WEEK)
        rendered = templates.mail(
            "review_request", approver_name="Ann", summary=summary,
            period=period_label(WEEK, WEEK + 7 * 24 * HOUR, "Europe/Berlin"), stage=0,
            stage_count=2, approve_url=links.approve_url, reject_url=links.reject_url,
            reply_address="x", prefs_url=prefs_url(settings, "d" * 24, "c" * 24, WEEK),
            mode="instant",
        )
        return build_message(settings, rendered, to="ann@example.com",
                             reply_token=links.reply_token).as_bytes()

    sample = templates.mail(
        "review_request", approver_name="Ann", summary=summary, period="p", stage=0,
        stage_count=2, approve_url="a", reject_url="r", reply_address="x", prefs_url="p",
        mode="instant",
    )

    def bare() -> bytes:
        return new_message(mail_from=settings.mail_from, to="ann@example.com",
                           subject=sample.subject, text=sample.text, html=sample.html,
                           mail_domain=settings.mail_domain).as_bytes()

    render()
    bare()
    value, baseline = _time(render), _time(bare)
    note(f"review request: {len(render())} bytes")
    return [Figure("reviews_render", value, "us", baseline)]
