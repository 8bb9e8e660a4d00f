"""Extract the reply's own text from a message body: no quoted history, no signature.

`extract_reply(text)` works line by line over the text of `mail.reading` (which marks HTML
quotes as "> " lines) and removes:

- quoted lines (starting with ">", after optional spaces);
- attribution lines before a quote, possibly wrapped over up to three lines, in the languages
  of people's clients: English "On … wrote:", German "Am … schrieb …:" and "… schrieb am …:",
  French "Le … a écrit :", Spanish "El … escribió:", Dutch "Op … schreef …:" and
  "Op … heeft … het volgende geschreven:", Italian "Il … ha scritto:", Portuguese
  "Em … escreveu:", Chinese "… 写道" + colon, Japanese "… のメッセージ:"; a recognised
  attribution not followed by a quote (clients that do not quote the history) cuts the rest of
  the message;
- Outlook-style history, cut with everything after it: "-----Original Message-----" and its
  translations ("Ursprüngliche Nachricht", "Message d'origine", "Mensaje original",
  "Oorspronkelijk bericht", "原始邮件", …), forwarded-message separators, and a
  "From:" line followed within a few lines by "Sent:"/"Date:"/"To:"/"Subject:" lines (labels in
  English, German, French, Spanish, Dutch, Chinese);
- signatures, from the "-- " separator or a line of the "Sent from my iPhone" family
  (Outlook/Gmail/Yahoo mobile, Samsung, Android; and their German, French, Spanish, Dutch,
  Chinese and Japanese forms) up to the next quote or history header (so text of a
  bottom-posted reply after a quoted block is still read).

Bottom-posted and interleaved replies keep their own text: only quotes and their attributions
are dropped, text below a quote stays.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["extract_reply", "normalise_text"]

_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)


def normalise_text(text: str) -> str:
    """NFC, LF newlines, no zero-width characters, non-breaking spaces as spaces."""
    text = unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n"))
    return text.translate(_INVISIBLE).replace("\xa0", " ").replace("\u3000", " ")


_QUOTED = re.compile(r"^[ \t]*>")

# Attributions: a whole (possibly joined) line.
_STRONG_ATTRIBUTION = re.compile(
    r"""^\s*(?:
        on\b.{3,300}\bwrote\s*:
      | am\b.{3,300}\bschrieb\b.{0,200}:
      | .{1,200}\bschrieb\s+am\b.{3,200}:
      | le\b.{3,300}\ba\s+[ée]crit\s*:
      | el\b.{3,300}\bescribi[óo]\s*:
      | op\b.{3,300}\b(?:schreef\b.{0,200}|het\s+volgende\s+geschreven\s*):
      | il\b.{3,300}\bha\s+scritto\s*:
      | em\b.{3,300}\bescreveu\s*:
      | (?:在|于).{1,300}写道\s*[\uff1a:]
      | .{1,300}のメッセージ\s*[\uff1a:]
    )\s*$""",
    re.IGNORECASE | re.VERBOSE,
)
_WEAK_ATTRIBUTION = re.compile(
    r"^.{1,300}(?:\bwrote|\bschrieb|\ba\s+[ée]crit|\bescribi[óo]|\bschreef|\bha\s+scritto"
    r"|\bescreveu|\bgeschreven|写道|のメッセージ)\s*[\uff1a:]\s*$",
    re.IGNORECASE,
)

_SEPARATOR = re.compile(
    r"""^\s*[-_=*]{2,}\s*(?:
        original\s+message | forwarded\s+message | ursprüngliche\s+nachricht
      | weitergeleitete\s+nachricht | message\s+d['\u2019]origine | message\s+transféré
      | mensaje\s+original | mensaje\s+reenviado | oorspronkelijk\s+bericht
      | doorgestuurd\s+bericht | messaggio\s+originale | mensagem\s+original
      | 原始邮件 | 原始郵件 | 转发邮件 | 元のメッセージ
    )\s*[-_=*]{2,}\s*$""",
    re.IGNORECASE | re.VERBOSE,
)
_BEGIN_FORWARD = re.compile(r"^\s*begin\s+forwarded\s+message\s*:\s*$", re.IGNORECASE)

_FROM_LABEL = re.compile(
    r"^\s*\*?(?:from|von|de|van|da|发件人|寄件者|差出人)\s*\*?\s*[\uff1a:]", re.IGNORECASE
)
_HEADER_LABEL = re.compile(
    r"""^\s*\*?(?:
        sent|date|to|cc|subject
      | gesendet|datum|an|betreff
      | envoy[ée]|date|à|a|objet
      | enviado|fecha|para|asunto
      | verzonden|datum|aan|onderwerp
      | inviato|oggetto
      | 发送时间|日期|时间|收件人|主题|寄件日期|收件者|主旨|送信日時|宛先|件名
    )\s*\*?\s*[\uff1a:]""",
    re.IGNORECASE | re.VERBOSE,
)

_SIGNATURE_SEPARATOR = re.compile(r"^(?:-- ?|--\s*)$")
_MOBILE_SIGNATURE = re.compile(
    r"""^\s*(?:
        sent\s+from\s+my\s+.{1,40}
      | sent\s+(?:from|with|via|using)\s+.{1,40}?\b(?:for|on)\s+
            (?:ios|android|iphone|ipad|windows|mac|blackberry)\b.{0,20}
      | sent\s+(?:from|with|via|using)\s+(?:proton\s?mail|blackberry|samsung|gmail|outlook
            |yahoo\s+mail|mail\s+for|spark|bluemail|aqua\s?mail|k-9|fairemail)\b.{0,40}
      | get\s+outlook\s+for\s+\S.{0,30}
      | von\s+meinem\s+.{1,40}\s+gesendet
      | gesendet\s+(?:von|mit|vom)\s+.{1,40}
      | envoy[ée]\s+(?:de|depuis|à\s+partir\s+de)\s+(?:mon|ma)\s+.{1,40}
      | obtenez\s+outlook\s+pour\s+.{1,30}
      | enviado\s+(?:desde|de)\s+(?:mi|my)\s+.{1,40}
      | obtener\s+outlook\s+para\s+.{1,30}
      | (?:verzonden|verstuurd)\s+(?:vanaf\s+mijn|met)\s+.{1,40}
      | inviato\s+da\s+(?:il\s+mio\s+)?.{1,40}
      | 发自我的.{1,30} | 从我的.{1,30}发送 | 來自我的.{1,30} | 寄自我的.{1,30}
      | .{1,30}から送信
    )[\s.!]*$""",
    re.IGNORECASE | re.VERBOSE,
)
_RULE_LINE = re.compile(r"^\s*[-_=*~]{3,}\s*$")


def _is_blank(line: str) -> bool:
    return not line.strip()


def _attribution_span(lines: list[str], index: int) -> tuple[int, bool] | None:
    """(lines used, strong) if an attribution starts at `index` (joined over up to 3 lines)."""
    joined = ""
    for used in range(1, 4):
        if index + used > len(lines):
            return None
        line = lines[index + used - 1]
        if _is_blank(line) or _QUOTED.match(line):
            return None
        joined = f"{joined} {line.strip()}".strip()
        if len(joined) > 400:
            return None
        if _STRONG_ATTRIBUTION.match(joined):
            return used, True
        if _WEAK_ATTRIBUTION.match(joined):
            return used, False
    return None


def _next_content(lines: list[str], index: int) -> int:
    while index < len(lines) and _is_blank(lines[index]):
        index += 1
    return index


def _is_header_block(lines: list[str], index: int) -> bool:
    """A "From:" line followed within a few lines by another mail header label."""
    if not _FROM_LABEL.match(lines[index]):
        return False
    return any(_HEADER_LABEL.match(line) for line in lines[index + 1 : index + 6])


def _single_line_outlook(line: str) -> bool:
    """Outlook's history header flattened onto one line: "From: x Sent: y To: z Subject: w"."""
    return bool(
        _FROM_LABEL.match(line)
        and re.search(
            r"\b(?:sent|gesendet|envoy[ée]|enviado|verzonden|date|datum|fecha)\s*:",
            line[6:],
            re.IGNORECASE,
        )
        and re.search(r"\b(?:subject|betreff|objet|asunto|onderwerp)\s*:", line, re.IGNORECASE)
    )


def extract_reply(text: str) -> str:
    """The reply's own text (stripped), without quoted history or signatures."""
    lines = normalise_text(text).split("\n")
    kept: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if _QUOTED.match(line):
            index += 1
            continue
        if _SIGNATURE_SEPARATOR.match(line) or _MOBILE_SIGNATURE.match(stripped):
            # the signature runs to the next quote (bottom-posting: more may follow) or the end
            index += 1
            while index < len(lines) and not _QUOTED.match(lines[index]):
                if (
                    _attribution_span(lines, index)
                    or _SEPARATOR.match(lines[index])
                    or _is_header_block(lines, index)
                    or _single_line_outlook(lines[index])
                ):
                    break
                index += 1
            continue
        if _SEPARATOR.match(line) or _BEGIN_FORWARD.match(line):
            break
        if _is_header_block(lines, index) or _single_line_outlook(line):
            break
        span = _attribution_span(lines, index)
        if span is not None:
            used, strong = span
            after = _next_content(lines, index + used)
            if after < len(lines) and _QUOTED.match(lines[after]):
                index = after  # drop the attribution; the quote goes on the next rounds
                continue
            if strong:
                break  # history follows unquoted: nothing after this is the reply
        kept.append(line.rstrip())
        index += 1
    # trailing horizontal rules (Outlook's "____" before its header block) and blank lines
    while kept and (_is_blank(kept[-1]) or _RULE_LINE.match(kept[-1])):
        kept.pop()
    while kept and _is_blank(kept[0]):
        kept.pop(0)
    result = "\n".join(kept)
    return re.sub(r"\n{3,}", "\n\n", result).strip()
