"""The one-click pages' outcomes and errors, and timebot's section of the account page, in the
reader's language (#24), over real HTTP: a German approver's used and expired links, a
Spanish approver archived since, a French owner's submit link for a timesheet already
submitted, the French section of /account. A link that names nobody genuine (tampered) stays
English: its reader is unknown."""

from __future__ import annotations

from tests.mail.reviews_support import WEEK, WEEK_END, runtime_of
from tests.support import DAY_MS, Org
from tests.timebot.signin_support import account, browser, sign_in
from tests.timebot.test_links import review_mail_links, state_of
from timebot.secret_key.tokens import make_token, pack_period

LANG = """mutation($id: SvcId!, $lang: String!, $date: SvcDateFormat) {
  editPersonLang(id: $id, lang: $lang) { id }
  editPersonLocalisationDateFormat(id: $id, dateFormat: $date) { id }
}"""


async def test_used_expired_and_tampered_links_in_german(org: Org) -> None:
    hans = await org.add_member("Hans Genehmiger", "manager")
    await org.admin.gql(LANG, {"id": hans.id, "lang": "de", "date": "DD.MM.YYYY"})
    owner, _submitted, found = await review_mail_links(org, (hans,))
    approve = found[hans.id]["a"]
    decided = await org.http.post(approve)
    assert 'id="outcome">Genehmigt<' in decided.text
    again = await org.http.post(approve)
    assert 'id="outcome">Dieser Link wurde bereits verwendet<' in again.text
    assert "Diesmal wurde nichts geändert." in again.text
    assert '<html lang="de">' in again.text
    tampered = approve[:-1] + ("a" if approve[-1] != "a" else "b")
    refused = await org.http.get(tampered)
    assert refused.status_code == 400 and "This link is not valid" in refused.text
    runtime_of(org).clock.advance(15 * DAY_MS)
    expired = await org.http.get(found[hans.id]["r"])
    assert expired.status_code == 410
    assert 'id="outcome">Dieser Link ist abgelaufen<' in expired.text
    assert "Links in unseren E-Mails funktionieren nur begrenzte Zeit." in expired.text
    assert (await state_of(org, owner))["status"] == "a"


async def test_an_archived_approvers_link_in_spanish(org: Org) -> None:
    pilar = await org.add_member("Pilar Aprobadora", "manager")
    await org.admin.gql(LANG, {"id": pilar.id, "lang": "es", "date": None})
    owner, _submitted, found = await review_mail_links(org, (pilar,))
    await org.admin.gql("mutation($id: SvcId!) { archivePerson(id: $id) { id } }",
                        {"id": pilar.id})
    refused = await org.http.post(found[pilar.id]["a"])
    assert refused.status_code == 403
    assert 'id="outcome">Este enlace ya no es válido<' in refused.text
    assert ("Pilar Aprobadora ya no es una persona activa de la organización, así que este "
            "enlace no puede actuar en su nombre.") in refused.text
    assert (await state_of(org, owner))["status"] == "s"


async def test_a_submit_link_for_a_submitted_timesheet_in_french(org: Org) -> None:
    """`owner` (French) already submitted: her submit link says so, in her date format."""
    amelie = await org.add_member("Amélie Approbatrice", "manager")
    owner, _submitted, _found = await review_mail_links(org, (amelie,))
    await org.admin.gql(LANG, {"id": owner.id, "lang": "fr", "date": "DD/MM/YYYY"})
    runtime = runtime_of(org)
    token = make_token(runtime.settings.secret_key, "submit-link",
                       event_id=pack_period(WEEK, WEEK_END), approver_id=owner.id, stage=0,
                       expires_at_ms=runtime.clock.now_ms() + DAY_MS)
    base = found_base(_found[amelie.id]["a"])
    shown = await org.http.get(f"{base}/s/{token}")
    assert shown.status_code == 200, shown.text
    assert 'id="outcome">Rien n&#39;a changé<' in shown.text or \
        "id=\"outcome\">Rien n'a changé<" in shown.text, shown.text
    assert ("Votre feuille de temps pour lun. 05/10/2026 au dim. 11/10/2026 attend déjà "
            "l&#39;approbation.") in shown.text or ("Votre feuille de temps pour lun. 05/10/2026"
                                                    " au dim. 11/10/2026 attend déjà "
                                                    "l'approbation.") in shown.text, shown.text


def found_base(url: str) -> str:
    return url.rsplit("/", 2)[0]


async def test_the_account_section_speaks_french(org: Org) -> None:
    await org.admin.gql(LANG, {"id": org.admin.id, "lang": "fr", "date": None})
    async with browser(org.live) as client:
        await sign_in(org.live, client, org.admin.email)
        page, csrf = await account(client)
        assert "E-mails d&#39;approbation" in page or "E-mails d'approbation" in page
        assert "Immédiatement" in page and "En résumé quotidien" in page
        assert "Non lié. Utilisez n" in page and "<code>/timesheet</code>" in page
        assert "Approval e-mails" not in page
        bad = await client.post("/account/notifications", data={"csrf": csrf, "mail": "hourly"})
        assert bad.status_code == 400
        assert "mail » invalide : choisissez parmi instant, digest." in bad.text, bad.text
