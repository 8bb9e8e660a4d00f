"""The fronts speak the reader's language (#24): one submission waits for three approvers — a
French one (DD/MM/YYYY, "1 234,5" numbers, decimal hours), a Spanish one and one who chose
nothing (English, as before) — the live server sends each a review e-mail in their own
language (read from the outbox), the Spanish one opens the one-click page over HTTP, and the
French one's reply over SMTP gets a French receipt (read from the Maildir outbox), the French
owner a French notice of the approval."""

from __future__ import annotations

import asyncio
import email
import email.policy
import shutil
import uuid
from collections.abc import AsyncIterator
from email.message import EmailMessage
from pathlib import Path

import httpx
import pytest

from tests.protocol.reply_helpers import (
    MailWorld,
    receipt_for,
    reply,
    smtp_send,
    smtp_world,
)
from tests.service.test_approvals_support import WEEK, add_record, set_stages, state, submit
from tests.support import HOUR_MS, Member, Org, new_org
from timebot.secret_key.tokens import REPLY_LOCAL_PREFIX

pytestmark = pytest.mark.skipif(shutil.which("swaks") is None, reason="swaks is needed")

LOCALISE = """mutation($id: SvcId!, $lang: String!, $date: SvcDateFormat,
                       $dec: SvcDecimalFormat, $sep: SvcThousandSeparator, $dur: Int) {
  editPersonLang(id: $id, lang: $lang) { id }
  editPersonLocalisationDateFormat(id: $id, dateFormat: $date) { id }
  editPersonLocalisationDecimalFormat(id: $id, decimalFormat: $dec) { id }
  editPersonLocalisationThousandSeparator(id: $id, thousandSeparator: $sep) { id }
  editPersonTimeSettingsDurationFormat(id: $id, durationFormat: $dur) { id }
}"""


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
async def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[MailWorld]:
    root = tmp_path_factory.mktemp(f"l10n-{request.param}")
    async with smtp_world(request.param, root) as world:
        yield world


@pytest.fixture
async def org(world: MailWorld) -> AsyncIterator[Org]:
    async with httpx.AsyncClient(timeout=30) as http:
        yield await new_org(world.live, http)


async def review_mail(world: MailWorld, member: Member) -> EmailMessage:
    return await outbox_mail(world, "review", member)


async def outbox_mail(world: MailWorld, kind: str, member: Member) -> EmailMessage:
    for _ in range(400):
        rows = [row for row in await world.mail.outbox.messages(kind)
                if member.email in row.rcpt_tos]
        if rows:
            [row] = rows
            parsed = email.message_from_bytes(row.raw, policy=email.policy.default)
            assert isinstance(parsed, EmailMessage)
            return parsed
        await asyncio.sleep(0.05)
    raise AssertionError(f"no {kind} mail for {member.name}")


def ascii_address(name: str) -> str:
    return f"{name}.{uuid.uuid4().hex[:6]}@example.com"


def text_of(message: EmailMessage) -> str:
    return str(message.get_body(("plain",)).get_content())  # type: ignore[union-attr]


def html_of(message: EmailMessage) -> str:
    return str(message.get_body(("html",)).get_content())  # type: ignore[union-attr]


async def test_each_approver_reads_the_review_the_page_and_the_receipt_in_their_language(
    world: MailWorld, org: Org,
) -> None:
    owner = await org.add_member("Bob")
    french = await org.add_member("Amélie", "manager", email=ascii_address("amelie"))
    spanish = await org.add_member("Pilar", "manager")
    english = await org.add_member("Ed", "manager")
    other = await org.add_member("Pedro", "manager")  # a language timebot does not speak
    await org.admin.gql(LOCALISE, {"id": owner.id, "lang": "fr", "date": "DD/MM/YYYY",
                                   "dec": None, "sep": None, "dur": None})
    await org.admin.gql(LOCALISE, {"id": french.id, "lang": "fr-FR", "date": "DD/MM/YYYY",
                                   "dec": ",", "sep": " ", "dur": 1})
    await org.admin.gql(LOCALISE, {"id": spanish.id, "lang": "es", "date": "DD-MM-YYYY",
                                   "dec": None, "sep": None, "dur": None})
    await org.admin.gql(LOCALISE, {"id": other.id, "lang": "pt-BR", "date": None,
                                   "dec": None, "sep": None, "dur": None})
    await set_stages(org, [{"type": "person", "quorum": "any",
                            "personIds": [french.id, spanish.id, english.id, other.id]}])
    await world.runtime.subscriptions.ensure(org.id)
    await add_record(owner, owner, day=1, hours=7)
    await owner.gql(  # half an hour more: 7.5 hours in all
        "mutation($s: SvcTimestamp!, $d: Int!, $p: SvcId!) {"
        " addTimeRecord(startTime: $s, duration: $d, personId: $p) { id } }",
        {"s": WEEK + 2 * 24 * HOUR_MS + 9 * HOUR_MS, "d": HOUR_MS // 2, "p": owner.id})
    event = await submit(owner, owner)
    assert event["status"] == "s", event

    # French: her date format, decimal hours with her separator, the texts in French.
    to_french = await review_mail(world, french)
    assert to_french["Subject"] == (
        "Feuille de temps à valider : Bob, lun. 02/03/2026 au dim. 08/03/2026")
    text = text_of(to_french)
    assert text.startswith("Bonjour Amélie,\n\nBob a soumis la feuille de temps pour "
                           "lun. 02/03/2026 au dim. 08/03/2026 et elle attend votre approbation.")
    assert "Total : 7,5 h" in text and "mar. 03/03/2026  7 h" in text
    assert "mer. 04/03/2026  0,5 h" in text
    assert "Approuver : http" in text and "« approve »" in text
    assert "Approuver</a>" in html_of(to_french)

    # Nothing chosen, or a language timebot does not speak: English, as it always was.
    for reader in (english, other):
        to_english = await review_mail(world, reader)
        assert to_english["Subject"] == "Timesheet to review: Bob, Mon 02 Mar to Sun 08 Mar 2026"
        text = text_of(to_english)
        assert text.startswith(f"Hello {reader.name},") and "Total: 7h 30m" in text
        assert "Tue 03 Mar  7h" in text and "Wed 04 Mar  30m" in text

    # Spanish: the one-click page over HTTP (GET decides nothing).
    to_spanish = await review_mail(world, spanish)
    assert to_spanish["Subject"].startswith("Hoja de horas para revisar: Bob, lun 02-03-2026")
    approve_url = next(word for word in text_of(to_spanish).split() if "/a/" in word)
    async with httpx.AsyncClient(timeout=30) as http:
        page = await http.get(approve_url)
    assert page.status_code == 200
    assert '<html lang="es">' in page.text
    assert "¿Aprobar la hoja de horas de" in page.text
    assert "Esta es la etapa 1 de 1. Todavía no se ha decidido nada." in page.text
    assert '<button type="submit" id="approve">Aprobar</button>' in page.text
    prefs_url = next(word for word in text_of(to_spanish).split() if "/prefs/" in word)
    async with httpx.AsyncClient(timeout=30) as http:
        prefs = await http.get(prefs_url)
    assert "Cómo te llegan las novedades de aprobación, Pilar" in prefs.text
    assert (await state(org.admin, owner))["status"] == "s"

    # French: her reply over SMTP, her receipt in French (the first line stays the contract's).
    token = str(to_french["Reply-To"]).split("@")[0][len(REPLY_LOCAL_PREFIX):]
    raw = reply(french.email, token, "approve", sign_with=world.keys["example.com"],
                subject=str(to_french["Subject"]))
    await smtp_send(world, raw, str(to_french["Reply-To"]), french.email)
    receipt = await receipt_for(world, raw)
    assert (await state(org.admin, owner))["status"] == "a"
    assert receipt.first_line == "Approved"
    assert ("Vous avez approuvé la feuille de temps de Bob pour 02/03/2026 au 08/03/2026 à "
            "étape 1 sur 1 (Personnes désignées). Elle est maintenant approuvée.") in receipt.text
    assert "timebot (ceci est une réponse automatique à votre e-mail)" in receipt.text
    assert "Vous avez approuvé" in receipt.html

    # Bob (French too) is told of the final approval in French, in his date format, the
    # period named as the review mail names it.
    notice = await outbox_mail(world, "owner-notice", owner)
    assert notice["Subject"] == (
        "Votre feuille de temps pour lun. 02/03/2026 au dim. 08/03/2026 est approuvée")
    assert text_of(notice).startswith(
        "Bonjour Bob,\n\nAmélie a approuvé votre feuille de temps pour lun. 02/03/2026 au "
        "dim. 08/03/2026 (étape 1 sur 1) : elle est maintenant approuvée.")

    # The Spanish link, used after the decision: the page still speaks Spanish.
    async with httpx.AsyncClient(timeout=30) as http:
        late = await http.post(approve_url)
    assert '<html lang="es">' in late.text


async def test_a_wrong_sender_is_answered_in_english_and_the_link_pages_too(
    world: MailWorld, org: Org, tmp_path: Path,
) -> None:
    """What timebot cannot attribute to a person is said in English (the hostile sender
    learns nothing of the approver's language)."""
    owner = await org.add_member("Bob")
    french = await org.add_member("Amélie", "manager", email=ascii_address("amelie"))
    await org.admin.gql(LOCALISE, {"id": french.id, "lang": "fr", "date": "DD/MM/YYYY",
                                   "dec": None, "sep": None, "dur": None})
    await set_stages(org, [{"type": "person", "personIds": [french.id]}])
    await world.runtime.subscriptions.ensure(org.id)
    await add_record(owner, owner, day=1, hours=8)
    await submit(owner, owner)
    to_french = await review_mail(world, french)
    token = str(to_french["Reply-To"]).split("@")[0][len(REPLY_LOCAL_PREFIX):]
    mallory = "mallory@example.com"
    raw = reply(mallory, token, "approve", sign_with=world.keys["example.com"])
    await smtp_send(world, raw, str(to_french["Reply-To"]), mallory)
    receipt = await receipt_for(world, raw)
    assert receipt.first_line == "Nothing changed"
    assert "This review request was sent to another approver" in receipt.text
    async with httpx.AsyncClient(timeout=30) as http:
        bad = await http.get(world.live.base_url + "/a/not-a-token")
    assert '<html lang="en">' in bad.text
