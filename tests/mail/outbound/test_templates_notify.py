"""E-mail templates and notification settings as the mails honour them, driven by submissions
through GraphQL and the service's real webhook deliveries, read from the outbox: the approver
whose review e-mails are off gets none, the organisation's template renders the review mail
(escaped in HTML), a person's own template wins over it, and a template that fails at run
time gives the built-in mail; the digest follows the same settings."""

from __future__ import annotations

from typing import Any

from mail.outbound.digest import send_digests
from tests.mail.reviews_support import (
    WEEK,
    add_record,
    component,
    html_part,
    mails,
    outbox_rows,
    runtime_of,
    set_stages,
    settle,
    submit,
    text_part,
    wait_for,
)
from tests.support import DAY_MS, HOUR_MS, Org
from timebot.notify.approvals import DIGEST, set_preference

CATEGORIES = ("mentions", "managedEntityMentions", "assignedEntityMentions", "approvalUpdate",
              "budgetAlert")
NOTIFY = ("mutation($id: SvcId!, $n: SvcNotificationSettingsInput) { "
          "editPersonNotificationSettings(id: $id, notification: $n) { id } }")
ORG_TEMPLATE = ("mutation($t: String) { editOrganisationEmailTemplateTimesheetSubmitted("
                "template: $t) { id } }")
PERSON_TEMPLATE = ("mutation($id: SvcId!, $t: String) { "
                   "editPersonEmailTemplateTimesheetSubmitted(id: $id, template: $t) { id } }")


def settings(**categories: str) -> dict[str, Any]:
    return {c: {"frequency": categories.get(c, "instant")} for c in CATEGORIES}


async def test_review_mails_follow_templates_and_notification_settings(org: Org) -> None:
    runtime = runtime_of(org)
    owner = await org.add_member("Olive <b>Owner</b>")
    quiet = await org.add_member("Quinn Quiet", "manager")
    plain = await org.add_member("Pat Plain", "manager")
    own = await org.add_member("Oda Own", "manager")
    await set_stages(org, (quiet, plain, own))
    # Quinn turns approval updates off herself; the admin sets the organisation's template,
    # and Oda's own one (which fails with one stage: 1 / (stage_count - 1)).
    await quiet.gql(NOTIFY, {"id": quiet.id, "n": settings(approvalUpdate="none")})
    await org.admin.gql(ORG_TEMPLATE, {"t": (
        "Subject: Please review {{ owner }}\n\nDear {{ person.name }},\n{{ owner }} submitted "
        "{{ period }} ({{ total }}).\nApprove: {{ approve_url }}")})
    await org.admin.gql(PERSON_TEMPLATE, {"id": own.id, "t": "Ratio {{ 1 / (stage_count - 1) }}"})
    await runtime.subscriptions.ensure(org.id)
    await add_record(owner, day=0, hours=3)
    await submit(owner)
    await settle(runtime, org.id, 1)
    await wait_for(lambda: outbox_rows(runtime, own.email, "review"), what="Oda's mail")
    await wait_for(lambda: outbox_rows(runtime, plain.email, "review"), what="Pat's mail")

    # Quinn gets nothing; Pat the organisation's template, with the mail's values only.
    assert await mails(runtime, quiet, "review") == []
    [to_plain] = await mails(runtime, plain, "review")
    assert to_plain["Subject"] == "Please review Olive <b>Owner</b>"
    text = text_part(to_plain)
    assert text.startswith("Dear Pat Plain,\nOlive <b>Owner</b> submitted ")
    assert "(3h)" in text and "Approve: http" in text
    assert "Olive &lt;b&gt;Owner&lt;/b&gt;" in html_part(to_plain)
    # Oda's own template failed to render: the built-in mail went instead.
    [to_own] = await mails(runtime, own, "review")
    assert "Ratio" not in text_part(to_own) and "Dear" not in text_part(to_own)
    assert "Approve" in text_part(to_own)
    assert "Olive" in to_own["Subject"]

    # The digest honours the settings too: both chose it; Quinn's approval updates are off.
    for member in (quiet, plain):
        await set_preference(runtime, org.id, member.id, DIGEST)
    runtime.clock.set(WEEK + 14 * DAY_MS + 10 * HOUR_MS)  # 10:00 UTC, past the digest hour
    await send_digests(component(org).ctx, org.id)
    assert len(await mails(runtime, plain, "digest")) == 1
    assert await mails(runtime, quiet, "digest") == []


async def test_the_digest_template_gets_the_readers_durations(org: Org) -> None:
    """The organisation's digest template is given each total in the reader's duration format
    and decimal separator (#43), as the review template is."""
    runtime = runtime_of(org)
    owner = await org.add_member("Otto Digest")
    dora = await org.add_member("Dora Decimal", "manager")
    await org.admin.gql("mutation($id: SvcId!) { editPersonLocalisationDecimalFormat(id: $id,"
                        ' decimalFormat: ",") { id } editPersonTimeSettingsDurationFormat('
                        "id: $id, durationFormat: 1) { id } }", {"id": dora.id})
    await org.admin.gql("mutation($t: String) { editOrganisationEmailTemplateDigest(template: "
                        "$t) { id } }", {"t": "Waiting:{% for i in items %} {{ i.owner }} "
                                               "{{ i.total }}{% endfor %}"})
    await set_stages(org, (dora,))
    await set_preference(runtime, org.id, dora.id, DIGEST)
    await runtime.subscriptions.ensure(org.id)
    await add_record(owner, day=0, hours=3)
    await owner.gql("mutation($s: SvcTimestamp!, $p: SvcId!) { addTimeRecord(startTime: $s,"
                    " duration: 1800000, personId: $p) { id } }",
                    {"s": WEEK + DAY_MS + 9 * HOUR_MS, "p": owner.id})
    await submit(owner)
    await settle(runtime, org.id, 1)
    runtime.clock.set(WEEK + 14 * DAY_MS + 10 * HOUR_MS)
    await send_digests(component(org).ctx, org.id)
    [digest] = await mails(runtime, dora, "digest")
    assert text_part(digest) == "Waiting: Otto Digest 3,5 h\n", text_part(digest)
