"""mail.replies.away_reply: out-of-office auto-replies read as absences, with their return dates."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from mail.inbound.loop_guard import LoopRefusal, why_not_act
from mail.reading.machine_signs import vacation_reply
from mail.reading.message import read_message
from mail.replies.away_reply import Away, read_away
from timebot.state.away import AUTO_REPLY, UNKNOWN_RETURN_DAYS, Absence, is_away

RECEIVED = date(2026, 11, 26)  # a Thursday
AUTO = LoopRefusal("auto-reply", "Auto-Submitted: auto-replied")

# (subject, body, expected return date or None for "away, return not stated")
AWAY_CASES: list[tuple[str, str, date | None]] = [
    ("Out of Office: Review", "I am out of the office until 2 December.", date(2026, 12, 2)),
    ("Automatic reply: Review", "Thanks for your mail. I'm back on Monday 7/12.",
     date(2026, 12, 7)),
    ("Réponse automatique : Review", "Je serai absent jusqu'au 2 décembre.", date(2026, 12, 2)),
    ("Abwesenheitsnotiz: Review", "Ich bin bis zum 02.12.2026 nicht im Büro.",
     date(2026, 12, 2)),
    ("Respuesta automática: Review", "Estaré fuera hasta el 2 de diciembre.",
     date(2026, 12, 2)),
    ("Automatic reply: Timesheet", "I am on annual leave and will return on December 3rd, 2026.",
     date(2026, 12, 3)),
    ("Out of office", "I'm away from 20 November to 4 December with limited access to email.",
     date(2026, 12, 4)),
    ("Automatic reply", "I am currently out of the office and will be back on 2026-12-09.",
     date(2026, 12, 9)),
    ("Out of Office", "I'm on vacation through Jan 5. For urgent matters contact Bob.",
     date(2027, 1, 5)),
    ("Automatic reply", "I'm out of the office until Monday. I'll reply when I'm back.",
     date(2026, 11, 30)),
    ("AUTO: Grace Hopper is out of the office (returning 12/07/2026)",
     "I am out of the office until 12/07/2026.", date(2026, 12, 7)),
    ("Automatic reply: Review", "I am on parental leave. Please contact hr@example.com.", None),
    ("Out of Office", "I am currently out of the office with no access to email.", None),
    ("Réponse automatique", "Bonjour, je suis en congés du 23/11 au 1er décembre inclus. "
     "De retour le 2 décembre.", date(2026, 12, 2)),
    ("Absence du bureau", "Je suis absente, de retour lundi.", date(2026, 11, 30)),
    ("Réponse automatique", "Je suis actuellement en vacances, sans accès à ma messagerie.",
     None),
    ("Abwesenheitsnotiz", "Vielen Dank für Ihre Nachricht. Ich bin bis 4. Dezember im Urlaub.",
     date(2026, 12, 4)),
    ("Automatische Antwort: Review", "Ich bin ab dem 7.12. wieder im Büro.", date(2026, 12, 7)),
    ("Abwesenheitsnotiz", "Ich bin außer Haus und ab Montag, 7. Dezember 2026 wieder erreichbar.",
     date(2026, 12, 7)),
    ("Abwesenheitsnotiz", "Ich bin derzeit abwesend. Ihre E-Mail wird nicht weitergeleitet.",
     None),
    ("Respuesta automática", "Estoy de vacaciones. Regresaré el lunes 7 de diciembre.",
     date(2026, 12, 7)),
    ("Fuera de la oficina", "Estaré ausente hasta el 15/12.", date(2026, 12, 15)),
    ("Respuesta automática", "Me encuentro fuera de la oficina sin acceso al correo.", None),
    ("Automatic reply: Review", "I'm out of the office until 5 January 2027, returning Tuesday.",
     date(2027, 1, 5)),
    ("Out of Office", "I'll be out until 3 January.", date(2027, 1, 3)),
    ("Automatic reply", "I am travelling on business until Friday 27 November.\n\n"
     "> Review: Ada's timesheet, 16 - 22 Nov 2026", date(2026, 11, 27)),
    ("Out of Office", "Away until 1 June 2025.", None),  # a forgotten auto-reply
    ("Out of Office: Review", "I am out of the office until 2 December.\n\n"
     "-----Original Message-----\nFrom: approvals@timebot.example\n"
     "Timesheet 28 December - 3 January", date(2026, 12, 2)),
    ("Out of the office", "Back Dec 1. Please expect delays.", date(2026, 12, 1)),
]


@pytest.mark.parametrize(("subject", "body", "until"), AWAY_CASES)
def test_away(subject: str, body: str, until: date | None) -> None:
    assert read_away(subject, body, RECEIVED, verdict=AUTO) == Away(until)


@pytest.mark.parametrize(("subject", "body", "until"), AWAY_CASES)
def test_away_by_subject_alone(subject: str, body: str, until: date | None) -> None:
    # Without a verdict, only the loop guard's auto-reply subjects count as a machine's reply.
    from mail.reading import machine_signs

    found = read_away(subject, body, RECEIVED)
    machine = machine_signs.AUTO_SUBJECT.match(subject) is not None
    assert found == (Away(until) if machine else None)


NOT_AWAY: list[tuple[str, str, LoopRefusal | None]] = [
    # a person's reply: the loop guard let it through
    ("Re: Review", "Approved. I'm out of the office until 2 December though.", None),
    ("Re: Out of office next week?", "I am away until 2 December.", None),
    # a machine, but not an absence
    ("Automatic reply: Review", "Thank you, we have received your request #1234.", AUTO),
    ("Auto-Reply", "Your message has been received and will be answered shortly.", AUTO),
    # other machine mail
    ("Undeliverable: Review", "I am out of the office until 2 December.",
     LoopRefusal("bounce", "subject")),
    ("Review", "Out of office until 2 December", LoopRefusal("list", "List-Id")),
    ("Out of office", "until 2 December", LoopRefusal("own", "our own address")),
]


@pytest.mark.parametrize(("subject", "body", "verdict"), NOT_AWAY)
def test_not_away(subject: str, body: str, verdict: LoopRefusal | None) -> None:
    assert read_away(subject, body, RECEIVED, verdict=verdict) is None


def test_the_loop_guards_verdict_of_a_whole_message() -> None:
    raw = (b"From: grace@example.com\r\nTo: approvals+tok@timebot.example\r\n"
           b"Subject: Review: Ada's timesheet\r\nAuto-Submitted: auto-replied\r\n\r\n"
           b"Ich bin bis zum 02.12.2026 nicht im B\xc3\xbcro.\r\n")
    read = read_message(raw)
    verdict = why_not_act(read, mail_domain="timebot.example")
    assert verdict is not None and verdict.kind == "auto-reply"
    assert read_away(read.subject, read.text, RECEIVED, verdict=verdict) == Away(
        date(2026, 12, 2))


def test_year_boundary_and_leap_day() -> None:
    assert read_away("Out of office", "Back on 29 February.", date(2026, 12, 30),
                     verdict=AUTO) == Away(date(2028, 2, 29))
    assert read_away("Out of office", "Away until 2 January.", date(2026, 12, 30),
                     verdict=AUTO) == Away(date(2027, 1, 2))


def test_hostile_input_is_bounded() -> None:
    body = "out of office until " + "12/" * 200_000 + " 1/1" * 50_000
    assert read_away("Out of office", body, RECEIVED, verdict=AUTO) is not None
    found = read_away("Out of office" * 10_000, "x" * 1_000_000, RECEIVED, verdict=AUTO)
    assert found == Away(None)


# Issue 43: a range is away until its end, also when it was received inside it (5 December).
RANGES: list[tuple[str, str]] = [
    ("Out of Office", "I will be traveling for work on December 3-13."),
    ("Automatic reply", "I am out of the office December 3 - 13, 2026."),
    ("Automatic reply", "I am away between December 3 and 13."),
    ("Out of Office", "Away Dec 3rd \u2013 13th, limited access to email."),
    ("Out of Office", "On vacation December 3 through 13."),
    ("Réponse automatique", "Je suis absente du 3 au 13 décembre."),
    ("Réponse automatique", "Je serai absente à partir du 3 décembre jusqu'au 13 décembre."),
    ("Abwesenheitsnotiz", "Ich bin vom 3. bis 13. Dezember im Urlaub."),
    ("Abwesenheitsnotiz", "Ich bin ab dem 3. Dezember bis zum 13. Dezember im Urlaub."),
    ("Respuesta automática", "Estoy de vacaciones del 3 al 13 de diciembre."),
]


@pytest.mark.parametrize("received", [RECEIVED, date(2026, 12, 5)])
@pytest.mark.parametrize(("subject", "body"), RANGES)
def test_a_range_is_away_until_its_end(subject: str, body: str, received: date) -> None:
    assert read_away(subject, body, received, verdict=AUTO) == Away(date(2026, 12, 13))


def test_a_range_keeps_what_is_not_one() -> None:
    # a time after a date, a return date after the range, a range into the next month
    assert read_away("Out of office", "Away until December 3 - 14:00 at the latest.",
                     RECEIVED, verdict=AUTO) == Away(date(2026, 12, 3))
    assert read_away("Out of office", "Away December 3-13, back on December 14.", RECEIVED,
                     verdict=AUTO) == Away(date(2026, 12, 14))
    assert read_away("Out of office", "On leave December 28 - 4.", RECEIVED,
                     verdict=AUTO) == Away(date(2027, 1, 4))


APPLE_VACATION = "Thanks for your message. I will get back to you as soon as I can."


def test_an_apple_vacation_reply_is_an_absence_whatever_its_words() -> None:
    raw = (b"From: grace@icloud.com\r\nTo: approvals+tok@timebot.example\r\n"
           b"Subject: Auto reply: Review: Ada's timesheet\r\nX-Apple-Action: VACATION\r\n\r\n"
           + APPLE_VACATION.encode() + b"\r\n")
    read = read_message(raw)
    verdict = why_not_act(read, mail_domain="timebot.example")
    assert verdict is not None and verdict.kind == "auto-reply"
    assert read_away(read.subject, read.text, RECEIVED, verdict=verdict,
                     vacation=vacation_reply(read.headers)) == Away(None)
    # The same words from an autoresponder that does not say it is a vacation: no absence.
    assert read_away(read.subject, read.text, RECEIVED, verdict=verdict) is None


@pytest.mark.parametrize(("headers", "vacation"), [
    ((("X-Apple-Action", "VACATION"),), True),
    ((("x-apple-action", " vacation "),), True),
    ((("Auto-Submitted", "auto-replied (vacation)"),), True),
    ((("X-Vacation", "yes"),), True),
    ((("X-Mailer", "vacation 1.2.7"),), True),
    ((("X-Apple-Action", "FORWARD"),), False),
    ((("Auto-Submitted", "auto-replied"),), False),
    ((("X-Vacation", "no"),), False),
    ((("Subject", "vacation"),), False),
])
def test_vacation_signs(headers: tuple[tuple[str, str], ...], vacation: bool) -> None:
    assert vacation_reply(headers) is vacation


def test_an_x_apple_action_vacation_is_a_machines_reply_whatever_its_subject() -> None:
    read = read_message(b"From: grace@icloud.com\r\nSubject: Review\r\n"
                        b"X-Apple-Action: VACATION\r\n\r\nBack soon.\r\n")
    verdict = why_not_act(read, mail_domain="timebot.example")
    assert verdict is not None and verdict.kind == "auto-reply"


def test_an_absence_without_a_date_lasts_a_bounded_documented_time() -> None:
    seen = 1_700_000_000_000
    undated = Absence("o", "g", AUTO_REPLY, None, seen)
    day_ms = 86_400_000
    assert is_away(undated, date(2026, 11, 26), seen + (UNKNOWN_RETURN_DAYS * day_ms) - 1)
    assert not is_away(undated, date(2026, 11, 26), seen + UNKNOWN_RETURN_DAYS * day_ms)
    readme = " ".join((Path(__file__).resolve().parents[3] / "README.md").read_text().split())
    assert f"away for {UNKNOWN_RETURN_DAYS} days after the last such reply" in readme
