"""What an approver's reply decides: `decide(reply_text) -> Decision`.

The reply's own text is taken first (`mail.reading.quotes.extract_reply`: no quoted history, no
signature, no "On … wrote:" header, no message the approver forwards: what they forward is not
what they wrote, neither a decision nor a Journal message), then its first non-blank line is
read. Case, accents,
leading spaces, surrounding punctuation and markup (`*approve*`, `"OK!"`) do not matter.

- **Approve** — the first line is an approval word, alone or with other approval words and a
  few politeness words ("Approved, thanks!", "OK danke", "Oui, merci"). A first line that
  starts with an approval word but says more ("OK but fix Tuesday") is *not* an approval: it
  is a Comment, since nothing should be approved by accident. Lines after an approving first
  line are kept as `Approve.comment`.
- **Reject(reason)** — the first line starts with a rejection word; the reason is the rest of
  that line (after ":", "-", "," …) and the following lines.
- **RejectWithoutReason** — a rejection word with no reason at all: changes nothing (the
  receipt says "Nothing changed" and asks for a reason).
- **Comment(text)** — anything else (it becomes a Journal message); `text` may be empty when
  the reply said nothing of its own.

Words (matched without accents, case-folded; each set also takes the past participle):

- English: approve(d), accept(ed), ok, okay, yes, lgtm /
  reject(ed), refuse(d), decline(d), deny, denied
- French: approuver, approuve(é), accepter, accepte(é), oui, d'accord, valider, validé /
  rejeter, rejette, rejeté, refuser, refuse(é)
- German: genehmigen, genehmige, genehmigt, akzeptieren, akzeptiert, ja, einverstanden,
  freigeben, freigegeben / ablehnen, abgelehnt, lehne ab, zurückweisen, zurückgewiesen
- Spanish: aprobar, apruebo, aprobado, aceptar, acepto, aceptado, sí/si, vale, de acuerdo /
  rechazar, rechazo, rechazado, denegar, denegado
- Dutch: goedkeuren, goedgekeurd, akkoord, accepteren, ja / afwijzen, afgewezen, weigeren,
  geweigerd

"no"/"nein"/"non" are deliberately *not* rejection words: "No problem, approved" and "Non
merci" start with them. A decision word only inside quoted history is no decision.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from mail.reading.quotes import extract_reply

__all__ = [
    "Approve",
    "Comment",
    "Decision",
    "Reject",
    "RejectWithoutReason",
    "decide",
]


@dataclass(frozen=True)
class Approve:
    comment: str = ""  # the lines after the approving first line, if any


@dataclass(frozen=True)
class Reject:
    reason: str


@dataclass(frozen=True)
class RejectWithoutReason:
    pass


@dataclass(frozen=True)
class Comment:
    text: str


Decision = Approve | Reject | RejectWithoutReason | Comment


def _fold(text: str) -> str:
    """Case-folded, without accents (é -> e, ß -> ss)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold().replace("\u2019", "'"))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


_APPROVE_WORDS = [
    # English
    "approve", "approved", "approving", "accept", "accepted", "ok", "okay", "okey", "yes",
    "yep", "lgtm",
    # French
    "approuver", "approuve", "approuvee", "approuves", "accepter", "accepte", "acceptee",
    "oui", "d'accord", "daccord", "valider", "valide", "validee",
    # German
    "genehmigen", "genehmige", "genehmigt", "akzeptieren", "akzeptiere", "akzeptiert", "ja",
    "einverstanden", "freigeben", "freigegeben", "gebe frei",
    # Spanish
    "aprobar", "apruebo", "aprobado", "aprobada", "aceptar", "acepto", "aceptado", "aceptada",
    "si", "vale", "de acuerdo",
    # Dutch
    "goedkeuren", "goedgekeurd", "akkoord", "accepteren", "geaccepteerd",
]  # fmt: skip
_REJECT_WORDS = [
    # English
    "reject", "rejected", "rejecting", "refuse", "refused", "decline", "declined", "deny",
    "denied",
    # French
    "rejeter", "rejette", "rejete", "rejetee", "refuser", "refusee",
    # German
    "ablehnen", "abgelehnt", "lehne ab", "lehne es ab", "zuruckweisen", "zuruckgewiesen",
    "weise zuruck",
    # Spanish
    "rechazar", "rechazo", "rechazado", "rechazada", "denegar", "denegado", "denegada",
    # Dutch
    "afwijzen", "afgewezen", "weigeren", "geweigerd", "wijs af",
]  # fmt: skip
# may accompany approval words on the first line without turning it into a comment
_POLITE_WORDS = {
    "thanks", "thank", "you", "thx", "ty", "please", "cheers", "all", "good", "fine", "great",
    "looks", "to", "it", "is", "this", "that", "from", "me", "by", "i", "sure", "go", "ahead",
    "danke", "dir", "ihnen", "vielen", "dank", "gruss", "lg", "vg", "passt", "alles", "gut",
    "merci", "beaucoup", "c'est", "cest", "bon", "pour", "moi", "tout",
    "gracias", "muchas", "por", "mi", "parte", "todo", "bien", "perfecto",
    "bedankt", "je", "prima", "goed",
}  # fmt: skip

_WORD = r"[\w']+"


def _phrase_pattern(phrases: list[str]) -> re.Pattern[str]:
    ordered = sorted({_fold(p) for p in phrases}, key=len, reverse=True)
    alternatives = "|".join(r"\s+".join(map(re.escape, p.split())) for p in ordered)
    return re.compile(rf"(?:{alternatives})(?![\w'])")


_APPROVE = _phrase_pattern(_APPROVE_WORDS)
_REJECT = _phrase_pattern(_REJECT_WORDS)
_LEAD = re.compile(r"^[\W_]*")  # punctuation, markup, spaces before the first word


def _approval_line(folded: str) -> bool:
    """Only approval phrases and politeness words (and punctuation) on the line."""
    rest = folded
    matched_one = False
    while True:
        rest = _LEAD.sub("", rest)
        if not rest:
            return matched_one
        found = _APPROVE.match(rest)
        if found:
            matched_one = True
            rest = rest[found.end() :]
            continue
        word = re.match(_WORD, rest)
        if word is None or word.group(0).strip("'") not in _POLITE_WORDS:
            return False
        if not matched_one:
            return False  # the line must start with an approval word
        rest = rest[word.end() :]


def _count_words(text: str) -> int:
    return len(re.findall(_WORD, text))


def _skip_words(line: str, count: int) -> str:
    """`line` after its first `count` words (and the separators after them)."""
    position = 0
    for _ in range(count):
        found = re.compile(_WORD).search(line, position)
        if found is None:
            return ""
        position = found.end()
    return line[position:]


def decide(reply_text: str) -> Decision:
    """The decision a reply's text expresses (see the module docstring)."""
    own = extract_reply(reply_text, forwards=False)
    lines = own.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    if not lines:
        return Comment("")
    first, following = lines[0], lines[1:]
    folded = _LEAD.sub("", _fold(first))

    if _approval_line(folded):
        return Approve(comment="\n".join(following).strip())

    rejected = _REJECT.match(folded)
    if rejected:
        words = _count_words(rejected.group(0))
        rest_of_line = _skip_words(unicodedata.normalize("NFC", first), words)
        rest_of_line = re.sub(r"^[\s:;,.!\-\u2013\u2014=>)*_]+", "", rest_of_line)
        reason = "\n".join([rest_of_line, *following]).strip()
        reason = re.sub(r"\n{3,}", "\n\n", reason)
        if not re.search(r"\w", reason):
            return RejectWithoutReason()
        return Reject(reason=reason)

    return Comment(own)

