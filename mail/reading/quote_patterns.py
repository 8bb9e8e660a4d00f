# ruff: noqa: RUF001, RUF003  (patterns in many scripts: look-alike letters are intended)
"""The line patterns `mail.reading.quotes` reads replies with: attributions ("On … wrote:" and its
translations, date-first "2026-11-23 09:12 Mia <mia@x>:"), Outlook-style history headers
and separators, and signatures ("-- ", "Sent from my iPhone" and its translations).

Each pattern matches one line, or an attribution's lines joined by spaces; the languages
covered are listed beside each pattern.
"""

from __future__ import annotations

import re

__all__ = [
    "ADDRESS",
    "ATTRIBUTION_START",
    "ATTRIBUTION_WORDS",
    "BEGIN_FORWARD",
    "DATE_LABEL",
    "DECORATED",
    "FORWARD_SEPARATOR",
    "FROM_LABEL",
    "HEADER_LABEL",
    "LIST_FOOTER",
    "MOBILE_SIGNATURE",
    "NOT_A_QUOTE",
    "OWN_SENTENCE",
    "QUOTED",
    "RULE_LINE",
    "SEPARATOR",
    "SIGNATURE_SEPARATOR",
    "SINGLE_LINE_OUTLOOK_SENT",
    "SINGLE_LINE_OUTLOOK_SUBJECT",
    "STRONG_ATTRIBUTION",
    "TIME",
    "WEAK_ATTRIBUTION",
]

QUOTED = re.compile(r"^[ \t]*>")
# ">>> >>> http://www.example.com <<<": arrows around a link, no quote
NOT_A_QUOTE = re.compile(r"^[ \t]*>{2,}.{0,200}<{2,}[ \t]*$")

# Attributions that can only be one: a whole (possibly joined) line. English ("On … wrote:",
# "On … sent:", "On … <mia@x> wrote" without colon), German (two orders), French, Spanish,
# Dutch (two forms), Italian ("Il …", "In data …"), Portuguese, Swedish/Norwegian/Danish
# ("Den … skrev …:", "På … skrev …:"), Polish ("W dniu …", "Dnia … napisał(a):"), Vietnamese
# ("Vào … đã viết:"), Chinese, Japanese, and date-first headers ending with the writer's
# address ("2026-11-23 09:12 GMT+01:00 Mia <mia@x>:", "2026年11月23日(月) 9:12 Mia <mia@x>:",
# Gmail's Russian "пн, 23 нояб. 2026 г. в 09:12, Mia <mia@x>:").
STRONG_ATTRIBUTION = re.compile(
    r"""^\s*(?:
        on\b.{3,300}\bwrote\s*:
      | on\b(?=.{0,300}(?:@|\d[:.]\d\d)).{3,300}\bsent\s*:
      | on\b.{3,300}@.{0,100}\bwrote\s*:?
      | am\b.{3,300}\bschrieb\b.{0,200}:
      | .{1,200}\bschrieb\s+am\b.{3,200}:
      | le\b.{3,300}\ba\s+[ée]crit\s*:
      | el\b.{3,300}\bescribi[óo]\s*:
      | op\b.{3,300}\b(?:schreef\b.{0,200}|het\s+volgende\s+geschreven\s*):
      | (?:il|in\s+data)\b.{3,300}\bha\s+scritto\s*:
      | em\b.{3,300}\bescreveu\s*:
      | (?:den|på)\b.{3,300}\bskrev\b.{0,200}:
      | (?:w\s+)?dniu\b.{3,300}\bnapisał(?:\(a\)|a)?\s*:
      | dnia\b.{3,300}\bnapisał(?:\(a\)|a)?\s*:
      | vào\b.{3,300}\bđã\s+viết\s*:
      | (?:在|于).{1,300}写道\s*[\uff1a:]
      | .{1,300}のメッセージ\s*[\uff1a:]
      | (?=.{0,80}(?<!\d)(?:19|20)\d\d(?!\d))(?=.{0,120}\b\d{1,2}[:.]\d\d\b)
            .{6,200}(?:<\s*[^<>\s@]+@[^<>\s]+>|\s[^<>\s@]+@[^<>\s]+\.\w+)\s*[\uff1a:]
    )\s*$""",
    re.IGNORECASE | re.VERBOSE,
)
# An attribution only when a quote follows: "… wrote:", "… skrev:", "… napisał(a):",
# "… написал:", "… пишет:", "… пише:", "… написав:" and the words above.
# (The look-ahead first: a line not ending with a colon fails at once.)
WEAK_ATTRIBUTION = re.compile(
    r"^(?=.{1,300}[\uff1a:]\s*$).{1,300}"
    r"(?:\b(?:wrote|schrieb|a\s+[ée]crit|escribi[óo]|schreef|ha\s+scritto|escreveu|geschreven"
    r"|skrev\b.{0,200}|napisał(?:\(a\)|a)?|написал(?:\(а\)|а)?|пишет|пише"
    r"|написав(?:\(ла\)|ла)?|kirjoitti|đã\s+viết)|写道|のメッセージ)"
    r"\s*[\uff1a:]\s*$"
    # date first, the writer's address last, no colon: "2011/4/7 Nathan <n@example.com>"
    r"|^\s*(?:(?:19|20)\d\d[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.](?:19|20)\d\d)\b"
    r".{1,200}<[^<>\s@]+@[^<>\s]+>\s*$",
    re.IGNORECASE,
)
# what makes a weak attribution a strong one: the writer's address, and a time on its first line
# ("pe 20. lokakuuta 2017 klo 17.50 John <j@example.com> kirjoitti:")
ADDRESS = re.compile(r"[^\s<>()\"@]+@[^\s<>()\"@]+\.\w")
TIME = re.compile(r"\b\d{1,2}[:.]\d\d\b")
# where an attribution may begin in the middle of a line ("reply On … wrote:")
ATTRIBUTION_START = re.compile(
    r"(?:(?<=\s)|(?<=-))(?:on|le|am|el|op|il|em|den)\s", re.IGNORECASE
)
# One of these is in every attribution the two patterns above match (lower case): a line
# without any is not tried against them.
ATTRIBUTION_WORDS = (
    "wrote", "sent", "schrieb", "crit", "escribi", "schreef", "geschreven", "scritto",
    "escreveu", "skrev", "napisa", "написа", "пишет", "пише", "kirjoitti", "viết", "写道",
    "のメッセージ", "@",
)
# "---- On … wrote ----" (Zoho and others): the attribution between dashes, colon optional
DECORATED = re.compile(r"^\s*[-\u2013\u2014]{2,}\s*(.+?)\s*[-\u2013\u2014]{2,}\s*$")
# a line that ends like a sentence of the writer's own, never the first line of a wrapped
# attribution ("Please fix Tuesday's hours.", "Thanks!")
OWN_SENTENCE = re.compile(r"(?:[^\W\d_]{3,}[.]|[!?])[\s\"')]*$")

# the quoted history below this line: everything after it is cut
SEPARATOR = re.compile(
    r"""^\s*[-_=*]{2,}\s*(?:
        original\s+message | reply\s+message | ursprüngliche\s+nachricht
      | antwort\s+nachricht | message\s+d['\u2019]origine | mensaje\s+original
      | oorspronkelijk\s+bericht | messaggio\s+originale | mensagem\s+original
      | ursprungligt\s+meddelande | opprinnelig\s+melding | oprindelig\s+(?:meddelelse|besked)
      | alkuperäinen\s+viesti | wiadomość\s+oryginalna | исходное\s+сообщение
      | 原始邮件 | 原始郵件 | 元のメッセージ
    )\s*[-_=*]{2,}\s*$""",
    re.IGNORECASE | re.VERBOSE,
)
# a message the writer forwards: their content, kept as it is (as talon keeps it)
FORWARD_SEPARATOR = re.compile(
    r"""^\s*[-_=*]{2,}\s*(?:
        forwarded\s+message | weitergeleitete\s+nachricht | message\s+transf[ée]r[ée]
      | mensaje\s+reenviado | doorgestuurd\s+bericht | messaggio\s+inoltrato
      | mensagem\s+encaminhada | vidarebefordrat\s+meddelande | videresendt\s+meddelelse
      | przekazana\s+wiadomość | пересылаемое\s+сообщение | 转发邮件 | 轉寄郵件 | 転送メッセージ
    )\s*[-_=*]{2,}\s*$""",
    re.IGNORECASE | re.VERBOSE,
)
BEGIN_FORWARD = re.compile(
    r"^\s*(?:begin\s+forwarded\s+message|anfang\s+der\s+weitergeleiteten\s+nachricht"
    r"|début\s+du\s+message\s+réexpédié|inicio\s+del\s+mensaje\s+reenviado)\s*:\s*$",
    re.IGNORECASE,
)
# a mailing list's footer under its rule ("____\nriak-users mailing list"): cut
LIST_FOOTER = re.compile(r"^.{0,80}\bmailing\s+list\s*$", re.IGNORECASE)

# Outlook's history header block: "From:" (English, German, French/Spanish/Portuguese/
# Catalan, Dutch, Italian, Swedish, Norwegian/Danish, Polish/Czech/Slovak, Russian/Bulgarian,
# Ukrainian, Croatian, Romanian, Turkish, Hungarian, Finnish, Greek, Indonesian, Vietnamese,
# Korean, Chinese, Japanese)
FROM_LABEL = re.compile(
    r"^\s*\*?(?:from|von|de|de\s+la|van|da|från|fra|od|от|від|šalje|kimden|feladó"
    r"|lähettäjä|από|dari|từ|보낸\s*사람|发件人|寄件者|差出人)\s*\*?\s*[\uff1a:]",
    re.IGNORECASE,
)
# a history header block may also start with its date ("Date: …", "Message du : …")
DATE_LABEL = re.compile(
    r"^\s*\*?(?:date|datum|fecha|data|дата|sent|gesendet|envoy[ée]|enviado|message\s+du"
    r"|odesláno|gönderildi|elküldve|lähetetty|trimis|dikirim)\s*\*?\s*[\uff1a:]",
    re.IGNORECASE,
)
# … followed within a few lines by one of these labels
HEADER_LABEL = re.compile(
    r"""^\s*\*?(?:
        sent|date|to|cc|subject|from
      | gesendet|datum|an|betreff
      | envoy[ée]|date|à|a|objet|de|copie\s+à|sujet
      | enviado|fecha|para|asunto
      | verzonden|datum|aan|onderwerp
      | inviato|oggetto
      | skickat|till|ämne|kopia
      | sendt|dato|til|emne|kopi
      | wysłane|wysłano|data|do|temat|dw
      | отправлено|дата|кому|копия|тема
      | надіслано|відправлено|копія
      | odesláno|odoslané|komu|předmět|predmet|kopie
      | gönderildi|kime|konu|bilgi
      | elküldve|címzett|tárgy|másolat
      | lähetetty|vastaanottaja|aihe|kopio
      | στάλθηκε|προς|θέμα|κοιν
      | trimis|către|subiect
      | dikirim|kepada|perihal|subjek|tanggal
      | đã\s+gửi|đến|chủ\s+đề
      | enviat|per\s+a|assumpte
      | изпратено|до|относно
      | poslano|prima
      | 보낸\s*날짜|받는\s*사람|제목|참조
      | 发送时间|日期|时间|收件人|主题|寄件日期|收件者|主旨|送信日時|宛先|件名
    )\s*\*?\s*[\uff1a:]""",
    re.IGNORECASE | re.VERBOSE,
)
# the same header flattened onto one line: "From: x Sent: y To: z Subject: w"
SINGLE_LINE_OUTLOOK_SENT = re.compile(
    r"\b(?:sent|gesendet|envoy[ée]|enviado|verzonden|date|datum|fecha|skickat|sendt"
    r"|wysłane|отправлено|надіслано)\s*:",
    re.IGNORECASE,
)
SINGLE_LINE_OUTLOOK_SUBJECT = re.compile(
    r"\b(?:subject|betreff|objet|asunto|onderwerp|ämne|emne|temat|тема)\s*:", re.IGNORECASE
)

SIGNATURE_SEPARATOR = re.compile(r"^(?:-- ?|--\s*)$")
# "Sent from my iPhone" and its family: English, German, French, Spanish, Dutch, Italian,
# Norwegian/Danish, Swedish, Polish, Russian, Ukrainian, Finnish, Chinese, Japanese
MOBILE_SIGNATURE = re.compile(
    r"""^\s*(?:
        sent\s+from\s+my\s+.{1,40}
      | sent\s+from\s+(?-i:[A-Z])[\w-]{1,30}(?:\s+(?-i:[A-Z])[\w-]{1,30})?
      | sent\s+(?:from|with|via|using)\s+.{1,40}?\b(?:for|on)\s+
            (?:ios|android|iphone|ipad|windows|mac|blackberry)\b.{0,20}
      | sent\s+(?:from|with|via|using)\s+(?:proton\s?mail|blackberry|samsung|gmail|outlook
            |yahoo\s+mail|mail\s+for|spark|bluemail|aqua\s?mail|k-9|fairemail)\b.{0,40}
      | get\s+outlook\s+for\s+\S.{0,30}
      | von\s+meinem\s+.{1,40}\s+gesendet
      | gesendet\s+(?:von|mit|vom)\s+.{1,40}
      | envoy[ée]\s+(?:de|depuis|à\s+partir\s+de)\s+
            (?:mon|ma|outlook|gmail|yahoo|samsung|bluemail|android|ios|iphone|ipad)\b.{0,40}
      | obtenez\s+outlook\s+pour\s+.{1,30}
      | enviado\s+(?:desde|de)\s+(?:mi|my)\s+.{1,40}
      | obtener\s+outlook\s+para\s+.{1,30}
      | (?:verzonden|verstuurd)\s+(?:vanaf\s+mijn|met)\s+.{1,40}
      | inviato\s+da\s+(?:il\s+mio\s+)?.{1,40}
      | sendt\s+fra\s+(?:min|mit)\s+.{1,40}
      | skickat\s+från\s+(?:min|mitt)\s+.{1,40}
      | wysłan[eo]\s+z\s+(?:mojego\s+)?.{1,40}
      | отправлено\s+(?:с|из)\s+.{1,40}
      | (?:надіслано|відправлено)\s+з\s+.{1,40}
      | lähetetty\s+\S{1,30}(?:sta|stä)
      | 发自我的.{1,30} | 从我的.{1,30}发送 | 來自我的.{1,30} | 寄自我的.{1,30}
      | .{1,30}から送信
    )\s*(?:<[^<>\s]{1,300}>|\(https?://[^()\s]{1,300}\))?[\s.!]*$""",
    re.IGNORECASE | re.VERBOSE,
)
RULE_LINE = re.compile(r"^\s*[-_=*~]{3,}\s*$")
