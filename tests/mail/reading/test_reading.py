# ruff: noqa: RUF001  (test data in many scripts: look-alike letters are intended)
"""The MIME reader (mail.reading.message) and the reply-text extraction (mail.reading.quotes)."""

from __future__ import annotations

import base64

import pytest

from mail.reading.html_text import html_to_text
from mail.reading.message import decode_text, read_message
from mail.reading.quotes import extract_reply


def raw(headers: str, body: bytes) -> bytes:
    return headers.replace("\n", "\r\n").encode() + b"\r\n" + body


def test_headers_and_threading() -> None:
    message = read_message(
        raw(
            "From: =?UTF-8?Q?J=C3=BCrgen?= <Juergen@Example.COM>\n"
            "To: Timebot <approvals+abc@timebot.localhost>, x@example.com\n"
            "Cc: y@example.com\n"
            "Subject: =?UTF-8?B?UmU6IFN0dW5kZW56ZXR0ZWwgZsO8ciBCb2I=?=\n"
            "Message-ID: <m1@example.com>\n"
            "In-Reply-To: <a.b@timebot.localhost>\n"
            "References: <older@x>\n <a.b@timebot.localhost>\n"
            "Return-Path: <juergen@example.com>\n"
            "Content-Type: text/plain\n",
            b"approve\r\n",
        )
    )
    assert message.from_address == "juergen@example.com"
    assert message.from_name == "Jürgen"
    assert message.from_domain == "example.com"
    assert message.subject == "Re: Stundenzettel für Bob"
    assert message.message_id == "<m1@example.com>"
    assert message.in_reply_to == ("<a.b@timebot.localhost>",)
    assert message.references == ("<older@x>", "<a.b@timebot.localhost>")
    assert message.to == ("approvals+abc@timebot.localhost", "x@example.com", "y@example.com")
    assert message.return_path == "juergen@example.com"
    assert message.header("subject") == message.subject
    assert message.text == "approve\n" and message.text_source == "plain"


def test_several_from_addresses_give_no_from_address() -> None:
    message = read_message(raw("From: a@example.com, b@example.com\n", b"x"))
    assert message.from_address is None
    assert message.from_addresses == ("a@example.com", "b@example.com")


def test_null_return_path() -> None:
    assert read_message(raw("Return-Path: <>\nFrom: a@example.com\n", b"x")).return_path == ""


@pytest.mark.parametrize(
    ("charset", "text"),
    [
        ("iso-8859-1", "Abgelehnt: Stunden für Dienstag fehlen"),
        ("windows-1252", "Refusé : il manque 3 h – “mardi” €"),
        ("koi8-r", "Во вторник не хватает часов"),
        ("gb2312", "周二的工时不对"),
        ("shift_jis", "ありがとうございます"),
        ("big5", "週二的工時不對"),
        ("utf-8", "Ça marche 👍"),
    ],
)
@pytest.mark.parametrize("encoding", ["8bit", "base64", "quoted-printable"])
def test_charsets_and_transfer_encodings(charset: str, text: str, encoding: str) -> None:
    data = text.encode(charset)
    if encoding == "base64":
        body = base64.encodebytes(data)
    elif encoding == "quoted-printable":
        import quopri

        body = quopri.encodestring(data)
    else:
        body = data
    message = read_message(
        raw(
            f"From: a@example.com\nContent-Type: text/plain; charset={charset}\n"
            f"Content-Transfer-Encoding: {encoding}\n",
            body,
        )
    )
    assert message.text.strip() == text


def test_charset_fallbacks() -> None:
    assert decode_text("Überstunden".encode("latin-1"), "utf-8") == "Überstunden"
    assert decode_text("Überstunden".encode(), None) == "Überstunden"
    assert decode_text("Überstunden".encode(), "no-such-charset") == "Überstunden"
    assert decode_text(b"\x81\x8d\xff", "utf-8") == "\x81\x8d\xff"  # latin-1 at last


def test_raw_8bit_header_is_decoded() -> None:
    message = read_message(b"From: J\xfcrgen <j@example.com>\r\nSubject: F\xc3\xbcr\r\n\r\nok")
    assert message.from_address == "j@example.com"
    assert message.subject == "Für"


def test_plain_preferred_over_html_and_attachments_skipped() -> None:
    body = (
        b"--b\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Disposition: attachment\r\n\r\n"
        b"attached reject\r\n--b\r\nContent-Type: multipart/alternative; boundary=c\r\n\r\n"
        b"--c\r\nContent-Type: text/html\r\n\r\n<p>html approve</p>\r\n"
        b"--c\r\nContent-Type: text/plain\r\n\r\nplain approve\r\n--c--\r\n--b--\r\n"
    )
    message = read_message(
        raw("From: a@example.com\nContent-Type: multipart/mixed; boundary=b\n", body)
    )
    assert message.text.strip() == "plain approve"


def test_html_only() -> None:
    body = (
        b"<html><head><style>p{color:red}</style><title>t</title></head><body>"
        b"<p>Reject:&nbsp;wrong&nbsp;project</p><p>second&amp;line</p>"
        b'<div class="gmail_signature">-- <br>Anna</div>'
        b'<blockquote type="cite">approve<blockquote>deeper</blockquote></blockquote>'
        b"<script>approve()</script></body></html>"
    )
    message = read_message(raw("From: a@example.com\nContent-Type: text/html\n", body))
    assert message.text_source == "html"
    assert message.text.split("\n")[:3] == ["Reject: wrong project", "", "second&line"]
    assert "> approve" in message.text and "> > deeper" in message.text
    assert "Anna" not in message.text and "approve()" not in message.text
    assert extract_reply(message.text) == "Reject: wrong project\n\nsecond&line"


def test_html_pre_and_br() -> None:
    assert html_to_text("<pre>a\n  b</pre>x<br>y<br/>z") == "a\n  b\nx\ny\nz"


def test_broken_input_never_raises() -> None:
    for data in (
        b"",
        b"\xff\xfe\x00garbage",
        b"Content-Type: multipart/mixed; boundary=\r\n\r\n--\r\n",
        b"From: <<<@@@>>>\r\nContent-Type: text/plain; charset=\"\r\n\r\nx",
        b"Content-Transfer-Encoding: base64\r\n\r\n!!!not base64",
        b"Subject: =?utf-8?q?broken\r\n\r\nbody",
        b"Content-Type: text/plain; charset=utf-7\r\n\r\n+ZeVnLIqe-",
    ):
        message = read_message(data)
        assert isinstance(message.text, str)


# --- quotes -----------------------------------------------------------------------------------

ORIGINAL = "Bob submitted his timesheet.\nReply approve or reject <reason>."
QUOTED = "> Bob submitted his timesheet.\n> Reply approve or reject <reason>."


@pytest.mark.parametrize(
    "history",
    [
        f"On Mon, Jan 5, 2026 at 10:00 AM Timebot <\nt@x.example> wrote:\n\n{QUOTED}",
        f"> On 5 Jan 2026, at 10:00, Timebot <t@x.example> wrote:\n> \n{QUOTED}",
        f"On 05/01/2026 10:00, Timebot wrote:\n{QUOTED}",
        f"Timebot schrieb am 05.01.2026 um 10:00:\n{QUOTED}",
        f"Am Mo., 5. Jan. 2026 um 10:00 Uhr schrieb Timebot <t@x.example>:\n\n{QUOTED}",
        f"Le lun. 5 janv. 2026 à 10:00, Timebot <t@x.example> a\nécrit :\n\n{QUOTED}",
        f"El lun, 5 ene 2026 a las 10:00, Timebot (<t@x.example>)\nescribió:\n\n{QUOTED}",
        f"Op ma 5 jan. 2026 om 10:00 schreef Timebot <t@x.example>:\n\n{QUOTED}",
        f"Op 5 jan 2026 om 10:00 heeft Timebot het volgende geschreven:\n\n{QUOTED}",
        f"在 2026年1月5日 10:00，Timebot <t@x.example> 写道：\n{QUOTED}",
        f"2026/01/05 10:00、Timebot <t@x.example> のメッセージ:\n\n{QUOTED}",
        f"-----Original Message-----\nFrom: Timebot\nSent: Monday\n\n{ORIGINAL}",
        f"________________________________\nFrom: Timebot <t@x.example>\nSent: Monday, January 5"
        f"\nTo: Anna\nSubject: Timesheet\n\n{ORIGINAL}",
        f"Von: Timebot <t@x.example>\nGesendet: Montag, 5. Januar 2026\nAn: Anna\n"
        f"Betreff: Stundenzettel\n\n{ORIGINAL}",
        f"De : Timebot\nEnvoyé : lundi 5 janvier 2026\nÀ : Anna\nObjet : Feuille\n\n{ORIGINAL}",
        f"De: Timebot\nEnviado el: lunes\nPara: Anna\nAsunto: Hoja\n\n{ORIGINAL}",
        f"Van: Timebot\nVerzonden: maandag\nAan: Anna\nOnderwerp: Urenstaat\n\n{ORIGINAL}",
        f"发件人: Timebot\n发送时间: 2026年1月5日\n收件人: Anna\n主题: 工时\n\n{ORIGINAL}",
        f"From: Timebot Sent: Monday To: Anna Subject: Timesheet {ORIGINAL}",
        f"-------- Original message --------\nFrom: Timebot\nDate: 05/01/2026\n\n{ORIGINAL}",
        f"------------------ 原始邮件 ------------------\n发件人: Timebot\n\n{ORIGINAL}",
    ],
)
def test_history_is_removed(history: str) -> None:
    assert extract_reply(f"Looks fine to me.\n\n{history}\n") == "Looks fine to me."


# Issue 43: Outlook's header block in the languages of more clients (Czech, Slovak, Turkish,
# Korean, Hungarian, Finnish, Greek, Romanian, Indonesian, Vietnamese, Catalan, Bulgarian,
# Croatian): the earlier mail under it is history, not the writer's words.
@pytest.mark.parametrize(
    "block",
    [
        "Od: Timebot <t@x.example>\nOdesláno: pondělí 5. ledna 2026 10:00\nKomu: Anna\n"
        "Předmět: Výkaz",
        "Od: Timebot <t@x.example>\nOdoslané: pondelok 5. januára 2026 10:00\nKomu: Anna\n"
        "Predmet: Výkaz",
        "Kimden: Timebot <t@x.example>\nGönderildi: 5 Ocak 2026 Pazartesi 10:00\nKime: Anna\n"
        "Konu: Zaman çizelgesi",
        "보낸 사람: Timebot <t@x.example>\n보낸 날짜: 2026년 1월 5일 월요일 오전 10:00\n"
        "받는 사람: Anna\n제목: 근무표",
        "Feladó: Timebot <t@x.example>\nElküldve: 2026. január 5. 10:00\nCímzett: Anna\n"
        "Tárgy: Munkaidő",
        "Lähettäjä: Timebot <t@x.example>\nLähetetty: maanantai 5. tammikuuta 2026 10.00\n"
        "Vastaanottaja: Anna\nAihe: Tuntilista",
        "Από: Timebot <t@x.example>\nΣτάλθηκε: Δευτέρα, 5 Ιανουαρίου 2026 10:00 πμ\n"
        "Προς: Anna\nΘέμα: Φύλλο",
        "De la: Timebot <t@x.example>\nTrimis: luni, 5 ianuarie 2026 10:00\nCătre: Anna\n"
        "Subiect: Pontaj",
        "Dari: Timebot <t@x.example>\nDikirim: Senin, 05 Januari 2026 10.00\nKepada: Anna\n"
        "Perihal: Lembar waktu",
        "Từ: Timebot <t@x.example>\nĐã gửi: Thứ Hai, 5 tháng 1, 2026 10:00\nĐến: Anna\n"
        "Chủ đề: Bảng chấm công",
        "De: Timebot <t@x.example>\nEnviat: dilluns, 5 de gener de 2026 10:00\nPer a: Anna\n"
        "Assumpte: Full d'hores",
        "От: Timebot <t@x.example>\nИзпратено: 5 януари 2026 г. 10:00\nДо: Anna\n"
        "Относно: График",
        "Šalje: Timebot <t@x.example>\nPoslano: 5. siječnja 2026. 10:00\nPrima: Anna\n"
        "Predmet: Evidencija",
    ],
)
def test_a_localised_header_block_cuts_the_history(block: str) -> None:
    assert extract_reply(f"Looks fine to me.\n\n{block}\n\n{ORIGINAL}\n") == \
        "Looks fine to me."


@pytest.mark.parametrize(
    "forward",
    [
        f"---------- Forwarded message ---------\nFrom: Timebot\n\n{ORIGINAL}",
        f"Begin forwarded message:\n\nFrom: Timebot\n\n{ORIGINAL}",
    ],
)
def test_a_forwarded_message_is_the_writers_content(forward: str) -> None:
    # what the writer forwards is theirs to show (as talon reads it), not quoted history …
    assert extract_reply(f"Looks fine to me.\n\n{forward}\n") == f"Looks fine to me.\n\n{forward}"
    # … but not what they wrote: without forwards (an approver's Journal message) it is cut
    assert extract_reply(f"Looks fine to me.\n\n{forward}\n", forwards=False) == \
        "Looks fine to me."
    assert extract_reply(f"{forward}\n", forwards=False) == ""


@pytest.mark.parametrize(
    "signature",
    [
        "-- \nAnna Approver\n+49 30 1234",
        "--\nAnna",
        "Sent from my iPhone",
        "Sent from my Galaxy",
        "Sent from Outlook for iOS",
        "Get Outlook for Android",
        "Sent from Yahoo Mail on Android",
        "Sent with Proton Mail secure email.",
        "Von meinem iPhone gesendet",
        "Gesendet von Outlook für Android",
        "Envoyé de mon iPhone",
        "Enviado desde mi iPhone",
        "Verzonden vanaf mijn iPhone",
        "发自我的iPhone",
        "iPhoneから送信",
    ],
)
def test_signatures_are_removed(signature: str) -> None:
    assert extract_reply(f"Looks fine to me.\n\n{signature}\n\n> quoted\n") == "Looks fine to me."


def test_text_that_merely_resembles_a_signature_stays() -> None:
    text = "Sent via the wrong project, please fix.\nFrom: Monday on it was wrong"
    assert extract_reply(text) == text


def test_interleaved_reply_keeps_all_own_text() -> None:
    text = "On Mon, Timebot wrote:\n> one\nfirst answer\n> two\nsecond answer\n"
    assert extract_reply(text) == "first answer\nsecond answer"


def test_outlook_web_html_reply() -> None:
    html = (
        '<html><body><div style="font-family:Calibri">Reject: Monday is wrong</div>'
        '<div id="appendonsend"></div><hr style="display:inline-block;width:98%">'
        '<div id="divRplyFwdMsg" dir="ltr"><font face="Calibri"><b>From:</b> Timebot '
        "&lt;t@x.example&gt;<br><b>Sent:</b> Monday, January 5, 2026 10:00 AM<br><b>To:</b> "
        "Anna<br><b>Subject:</b> Timesheet</font><div>&nbsp;</div></div>"
        "<div>Reply approve or reject</div></body></html>"
    )
    assert extract_reply(html_to_text(html)) == "Reject: Monday is wrong"


# --- own text directly above the attribution, and history in more layouts -----------------

ATTRIBUTION = "On Mon, 23 Nov 2026, Mia <mia@acme.example> wrote:"
FRENCH = "Le lun. 23 nov. 2026 à 09:12, Mia <mia@acme.example> a écrit :"
QUOTE_2 = "> Ingrid submitted her timesheet for 2026-11-16 to 2026-11-22.\n> Reply approve."


@pytest.mark.parametrize(
    ("text", "own"),
    [
        # own text with no blank line before the attribution
        (f"Approve\n{ATTRIBUTION}\n{QUOTE_2}", "Approve"),
        (f"Please fix Tuesday's hours.\n{ATTRIBUTION}\n{QUOTE_2}", "Please fix Tuesday's hours."),
        (f"Looks right.\nPlease book the offsite on Friday.\n{ATTRIBUTION}\n{QUOTE_2}",
         "Looks right.\nPlease book the offsite on Friday."),
        (f"Rejeter : il manque mardi\n{FRENCH}\n{QUOTE_2}", "Rejeter : il manque mardi"),
        ("Genehmigt\nMia schrieb am 23.11.2026 um 09:12:\n" + QUOTE_2, "Genehmigt"),
        ("Yes\nMia <mia@acme.example> wrote:\n" + QUOTE_2, "Yes"),
        # own line above an attribution that is itself wrapped over two lines
        ("ok\nOn Mon, 23 Nov 2026 at 09:12, Mia Example <\nmia@acme.example> wrote:\n" + QUOTE_2,
         "ok"),
        # the same with no quote after it (clients that do not quote)
        (f"Approve\n{ATTRIBUTION}\nIngrid submitted her timesheet.", "Approve"),
        # an attribution as the very first line, the reply below it unquoted
        (f"{ATTRIBUTION}\n\nApproved, thanks", "Approved, thanks"),
        # date-first attributions
        ("Fine by me.\n\n2026-11-23 09:12 GMT+01:00 Mia Example <mia@acme.example>:\n\n"
         + QUOTE_2, "Fine by me."),
        ("Fine by me.\n2026-11-23 9:12 GMT+01:00 Mia Example <mia@acme.example>:\n"
         "Ingrid submitted her timesheet.", "Fine by me."),
        ("Fine by me.\n\nпн, 23 нояб. 2026 г. в 09:12, Mia <mia@acme.example>:\n" + QUOTE_2,
         "Fine by me."),
        # ---- On … wrote ---- blocks (with or without the quote marks after it)
        ("Approved\n\n---- On Mon, 23 Nov 2026 09:12:00 +0100 Mia <mia@acme.example> wrote ----"
         "\n\nIngrid submitted her timesheet.", "Approved"),
        ("Approved\n---- On Mon, 23 Nov 2026 Mia wrote ----\n" + QUOTE_2, "Approved"),
        # the attribution wrapped so that its second line is quoted
        ("Approve\n\nOn Mon, 23 Nov 2026 at 09:12, Mia Example <mia@acme.example\n> wrote:\n"
         + QUOTE_2, "Approve"),
        ("Approve\nOn Mon, 23 Nov 2026 at 09:12, Mia Example\n> <mia@acme.example> wrote:\n"
         + QUOTE_2, "Approve"),
        # the attribution split by blank lines
        ("Approve\n\nOn Mon, 23 Nov 2026 at 09:12, Mia Example <mia@acme.example>\n\nwrote:\n\n"
         + QUOTE_2, "Approve"),
        ("Approve\n\nOn Mon, 23 Nov 2026 at 09:12,\n\nMia Example <mia@acme.example> wrote:\n"
         + QUOTE_2, "Approve"),
        # other languages' attributions
        ("Godkänt\n\nDen 23 nov. 2026 kl. 09:12 skrev Mia <mia@acme.example>:\n" + QUOTE_2,
         "Godkänt"),
        ("Ser bra ut\nman. 23. nov. 2026 kl. 09:12 skrev Mia Example <mia@acme.example>:\n"
         + QUOTE_2, "Ser bra ut"),
        ("Zatwierdzam\nW dniu 23.11.2026 o 09:12, Mia <mia@acme.example> napisał(a):\n"
         + QUOTE_2, "Zatwierdzam"),
        ("Zatwierdzam\n\npon., 23 lis 2026 o 09:12 Mia <mia@acme.example> napisał(a):\n"
         + QUOTE_2, "Zatwierdzam"),
        ("Согласовано\n23.11.2026 09:12, Mia Example написал:\n" + QUOTE_2, "Согласовано"),
        ("Согласовано\n\n23.11.2026, 09:12, Mia пишет:\n" + QUOTE_2, "Согласовано"),
        ("Погоджено\nпн, 23 лист. 2026 о 09:12 Mia <mia@acme.example> пише:\n" + QUOTE_2,
         "Погоджено"),
    ],
)
def test_own_text_is_kept_and_the_attribution_dropped(text: str, own: str) -> None:
    assert extract_reply(text) == own


OUTLOOK_BLOCKS = [
    "Från: Mia <mia@acme.example>\nSkickat: den 23 november 2026 09:12\nTill: Anna\n"
    "Ämne: Tidrapport",
    "Von: Mia <mia@acme.example>\nGesendet: Montag, 23. November 2026 09:12\nAn: Anna\n"
    "Betreff: Stundenzettel",
    "De : Mia <mia@acme.example>\nEnvoyé : lundi 23 novembre 2026 09:12\nÀ : Anna\n"
    "Objet : Feuille de temps",
    "De: Mia <mia@acme.example>\nEnviado: lunes, 23 de noviembre de 2026 9:12\nPara: Anna\n"
    "Asunto: Parte de horas",
    "Van: Mia <mia@acme.example>\nVerzonden: maandag 23 november 2026 09:12\nAan: Anna\n"
    "Onderwerp: Urenstaat",
    "Fra: Mia <mia@acme.example>\nSendt: mandag 23. november 2026 09:12\nTil: Anna\n"
    "Emne: Timeliste",
    "Fra: Mia <mia@acme.example>\nSendt: 23. november 2026 09:12\nTil: Anna\nCc: Bo\n"
    "Emne: Timeseddel",
    "Od: Mia <mia@acme.example>\nWysłane: poniedziałek, 23 listopada 2026 09:12\nDo: Anna\n"
    "Temat: Karta czasu pracy",
    "От: Mia <mia@acme.example>\nОтправлено: 23 ноября 2026 г. 9:12\nКому: Anna\n"
    "Тема: Табель",
    "Від: Mia <mia@acme.example>\nНадіслано: 23 листопада 2026 р. 9:12\nКому: Anna\n"
    "Тема: Табель",
]


@pytest.mark.parametrize("block", OUTLOOK_BLOCKS)
@pytest.mark.parametrize("separator", ["", "\n", "\n________________________________\n"])
def test_outlook_blocks_in_more_languages(block: str, separator: str) -> None:
    text = f"Approve{separator}\n{block}\n\nIngrid submitted her timesheet.\nReply approve."
    assert extract_reply(text) == "Approve"


@pytest.mark.parametrize(
    "signature",
    [
        "Sendt fra min iPad",
        "Sendt fra min iPhone",
        "Skickat från min iPhone",
        "Wysłane z mojego iPhone'a",
        "Wysłano z iPhone'a",
        "Отправлено с iPhone",
        "Отправлено с моего iPad",
        "Надіслано з iPhone",
        "Відправлено з мого iPhone",
        "Lähetetty iPhonesta",
    ],
)
def test_device_signatures_in_more_languages(signature: str) -> None:
    assert extract_reply(f"Looks fine to me.\n\n{signature}\n\n> quoted\n") == "Looks fine to me."
    assert extract_reply(f"Looks fine to me.\n{signature}") == "Looks fine to me."


@pytest.mark.parametrize(
    "text",
    [
        "I wrote: the hours for Monday are wrong.",
        "Please check what Mia wrote about Monday.\nThe hours are right.",
        "On Monday I was ill.\nOn Tuesday I wrote the report.",
        "Den här veckan skrev jag rapporten.",
        "2026-11-23 09:12 was the start.\nFrom: the office",
    ],
)
def test_own_text_that_resembles_an_attribution_stays(text: str) -> None:
    assert extract_reply(text) == text
