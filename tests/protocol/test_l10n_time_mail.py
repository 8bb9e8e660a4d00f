"""Quick time entry by mail answers in the sender's language and formats (#24): swaks to a
live timebot with SMTP on, the receipt read from the Maildir outbox. The entries as read are
in the sender's formats (#43) and the texts around them translated."""

from __future__ import annotations

import shutil

import pytest

from tests.protocol.test_time_entry_mail import (  # noqa: F401  (the module's server)
    fx,
    receipt_to,
    server,
    swaks,
    text_of,
)
from tests.support import LiveServer
from tests.timebot.timeentry_setup import Fixture

# Minutes of work in few tests: started first (tests/conftest.py), not left for the end.
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("swaks") is None, reason="swaks is needed")]

LANG = """mutation($id: SvcId!, $lang: String!, $date: SvcDateFormat) {
  editPersonLang(id: $id, lang: $lang) { id }
  editPersonLocalisationDateFormat(id: $id, dateFormat: $date) { id }
}"""


async def test_the_receipt_is_in_french(
    server: tuple[LiveServer, int], fx: Fixture,  # noqa: F811
) -> None:
    live, port = server
    await fx.org.admin.gql(LANG, {"id": fx.employee.id, "lang": "fr", "date": "DD/MM/YYYY"})
    sender = fx.employee.email
    await swaks(port, sender, "2h30 @acme/website fixing the header\n3h @nowhere\nsee you\n",
                subject="mes heures")
    receipt = receipt_to(live, sender)
    body = text_of(await receipt)
    lines = body.splitlines()
    assert lines[0] == "1 saisie enregistrée, 2 non enregistrée(s)", body
    assert ("Enregistré : 2h 30m le mer. 18/03/2026 · @Acme/Website · “fixing the header”"
            in lines), body
    assert ("Non enregistré : 3h @nowhere\n  @nowhere n'est pas un projet ou une tâche sur "
            "lequel vous pouvez saisir du temps.") in body
    assert "Non enregistré : see you\n  Non compris : " in body
    assert "(Dates lues dans votre fuseau horaire, Europe/Berlin.)" in body
    assert "Annulez dans Slack avec /time undo" in body
    assert "timebot (ceci est une réponse automatique à votre e-mail)" in body
    assert "Logged" not in body


async def test_submit_by_mail_is_answered_in_spanish(
    server: tuple[LiveServer, int], fx: Fixture,  # noqa: F811
) -> None:
    live, port = server
    await fx.org.admin.gql(LANG, {"id": fx.employee.id, "lang": "es", "date": "DD-MM-YYYY"})
    sender = fx.employee.email
    await swaks(port, sender, "submit\n", subject="submit")
    body = text_of(await receipt_to(live, sender))
    assert body.splitlines()[0] == (
        "Hoja de horas de la semana del lun 16-03-2026 al dom 22-03-2026 enviada y aprobada "
        "(no se aplica ningún flujo de aprobación)."), body
    assert "(Periodos leídos en tu zona horaria, Europe/Berlin.)" in body
    assert "Escribe `submit last` para enviar en su lugar" in body
    assert "timebot (esta es una respuesta automática a tu correo)" in body


async def test_an_empty_mail_is_refused_in_german(
    server: tuple[LiveServer, int], fx: Fixture,  # noqa: F811
) -> None:
    live, port = server
    await fx.org.admin.gql(LANG, {"id": fx.employee.id, "lang": "de", "date": None})
    sender = fx.employee.email
    await swaks(port, sender, "\n-- \nErin\n", subject="")
    body = text_of(await receipt_to(live, sender))
    assert body.splitlines()[0] == "Nothing changed", body  # the receipt's first line: a contract
    assert "Ihre E-Mail enthält keine Einträge, daher wurde nichts erfasst." in body
    assert "Schreiben Sie einen Eintrag pro Zeile" in body
