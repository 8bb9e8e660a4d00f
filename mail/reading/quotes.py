"""Extract the reply's own text from a message body: no quoted history, no signature.

`extract_reply(text)` works line by line over the text of `mail.reading.message` (which marks HTML
quotes as "> " lines) and removes:

- quoted lines (starting with ">", after optional spaces; not ">>> link <<<"), and the lines
  of a quote its client wrapped after quoting it (an unquoted line between two quote lines
  that is a link's end, the rest of a parenthesis opened above, or goes on in lower case
  under a long quoted line);
- attribution lines before a quote, possibly wrapped over up to five lines (split by a
  blank line, or with the wrapped part quoted: "On … <" / "mailto:…" / "> wrote:"), in the
  languages of people's clients (see `mail.reading.quote_patterns`): "On … wrote:", "Am … schrieb
  …:", "Le … a écrit :", "El … escribió:", "Op … schreef …:", "Il/In data … ha scritto:",
  "Den/På … skrev …:", "W dniu/Dnia … napisał(a):", "… пользователь … написал:", "… пише:",
  "… kirjoitti:", "Vào … đã viết:", "在 … 写道:", date-first "2026-11-23 09:12 Mia
  <mia@x>:", "---- On … wrote ----" and more; a weak one ("… wrote:") with the writer's
  address and a time is a strong one. A line directly above the attribution stays the
  writer's own unless it is part of it: the lines of a wrapped attribution together make
  one pattern, and the writer's `Approve` or sentence above a complete attribution is not
  part of it; an attribution starting mid-line ("reply On … wrote:") leaves the words before
  it. A recognised strong attribution not followed by a quote (clients that do not quote
  the history) cuts the rest of the message — unless nothing of the writer's own came
  before it: then only the attribution is dropped;
- Outlook-style history, cut with everything after it: "-----Original Message-----" and its
  translations ("Ursprüngliche Nachricht", "Message d'origine", "Mensaje original",
  "Oorspronkelijk bericht", "Oprindelig besked", "原始邮件", …), and a "From:" or date
  ("Date:", "Message du :") line followed within a few lines by "Sent:"/"Date:"/"To:"/
  "Subject:" lines (labels in English, German, French, Spanish, Dutch, Swedish, Norwegian,
  Danish, Polish, Russian, Ukrainian, Czech, Slovak, Turkish, Hungarian, Finnish, Greek,
  Romanian, Indonesian, Vietnamese, Catalan, Bulgarian, Croatian, Korean, Chinese); a mailing
  list's footer;
- signatures, from the "-- " separator or a line of the "Sent from my iPhone" family
  (Outlook/Gmail/Yahoo mobile, Samsung, Android, "Sent from <App>", a link after it; and
  their German, French, Spanish, Dutch, Scandinavian, Polish, Russian, Ukrainian, Finnish,
  Chinese and Japanese forms) up to the next quote, history header or forwarded message (so
  text of a bottom-posted reply after a quoted block is still read).

A forwarded message ("---------- Forwarded message ---------", "Begin forwarded message:"
and translations) is the writer's content, not history: it is kept as it is, with the
writer's text above it (as mailgun's talon reads it) — unless `forwards=False` (an approver's
reply: what they forward is not what they wrote), then it is cut as history is. Bottom-posted
and interleaved replies keep their own text: only quotes and their attributions are dropped,
text below a quote stays.

The reader runs on every reply: its patterns are compiled once, none has nested unbounded
repeats, the attribution search tries only lines that can end one and have one of its
words, and the characters it hands its patterns are counted against a budget of four times
the reply's size: a hostile body costs time in proportion to its size
(tests/mail/reading/test_reply_shapes.py).
"""

from __future__ import annotations

import re
import unicodedata

from mail.reading.quote_patterns import (
    ADDRESS,
    ATTRIBUTION_START,
    ATTRIBUTION_WORDS,
    BEGIN_FORWARD,
    DATE_LABEL,
    DECORATED,
    FORWARD_SEPARATOR,
    FROM_LABEL,
    HEADER_LABEL,
    LIST_FOOTER,
    MOBILE_SIGNATURE,
    NOT_A_QUOTE,
    OWN_SENTENCE,
    QUOTED,
    RULE_LINE,
    SEPARATOR,
    SIGNATURE_SEPARATOR,
    SINGLE_LINE_OUTLOOK_SENT,
    SINGLE_LINE_OUTLOOK_SUBJECT,
    STRONG_ATTRIBUTION,
    TIME,
    WEAK_ATTRIBUTION,
)

__all__ = ["extract_reply", "normalise_text"]

_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)


def normalise_text(text: str) -> str:
    """NFC, LF newlines, no zero-width characters, non-breaking spaces as spaces."""
    text = unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n"))
    return text.translate(_INVISIBLE).replace("\xa0", " ").replace("\u3000", " ")


_LONGEST_ATTRIBUTION = 400  # characters: longer lines are never (part of) an attribution
_QUOTE_MARKS = re.compile(r"^[ \t]*(?:>[ \t]?)+")
_URL = re.compile(r"(?:https?://|mailto:|www\.)[^\s<>()]{0,2000}", re.IGNORECASE)
_LETTERS = re.compile(r"[^\W\d_]{2}")
_LOWER_START = re.compile(r"^\s*[^\W\d_]")
_UNDERSCORES = re.compile(r"^\s*_{2,}\s*$")
_DIGIT = re.compile(r"\d")
_BLANK_RUNS = re.compile(r"\n{3,}")
# An attribution's strength: weak ("… wrote:"), weak made strong by the writer's address and a
# time on its first line, strong (its pattern alone says so)
_WEAK, _PROMOTED, _STRONG = 0, 1, 2


_DASHES = ("-", "\u2013", "\u2014")
_ENDINGS = (":", "\uff1a", ">", *_DASHES)


class _Budget:
    """What the attribution search knows of a reply's lines, and how many characters its
    patterns may still look at: a multiple of the reply's size, far above what a real
    reply needs, so that a hostile one costs time in proportion to its size whatever its
    lines are (afterwards no line is taken for an attribution: quotes, history headers and
    signatures are still recognised)."""

    def __init__(self, lines: list[str], characters: int) -> None:
        self.left = characters
        # whether each line ends as an attribution's last line may (a colon, the writer's
        # address, "wrote", the dashes of "---- On … wrote ----"), has one of the words of one
        # (not past _LONGEST_ATTRIBUTION); the first line at or after each one with such a word
        self.ends = [end.endswith(_ENDINGS) or end[-5:].lower() == "wrote"
                     for end in [line.rstrip() for line in lines]]
        self.worded = [len(line) <= _LONGEST_ATTRIBUTION
                       and _ATTRIBUTION_WORD.search(line.lower()) is not None for line in lines]
        self.next_worded = [len(lines)] * (len(lines) + 1)
        for index in range(len(lines) - 1, -1, -1):
            worded = self.worded[index]
            self.next_worded[index] = index if worded else self.next_worded[index + 1]

    def spend(self, characters: int) -> bool:
        self.left -= characters
        return self.left >= 0


# One search for any of the words (a scan in C, not a substring test per word and line).
_ATTRIBUTION_WORD = re.compile("|".join(map(re.escape, ATTRIBUTION_WORDS)))


def _is_blank(line: str) -> bool:
    return not line.strip()


def _quoted(line: str) -> bool:
    """A quote line: ">" first, unless arrows frame a link (">>> www.x.example <<<")."""
    if not QUOTED.match(line):
        return False
    return len(line) > 300 or not NOT_A_QUOTE.match(line)


def _attribution_at(
    lines: list[str], index: int, budget: _Budget, *, inner: bool = False
) -> tuple[int, int, int] | None:
    """(line after it, further parts, strength) if an attribution starts at `index`, shortest
    first. Up to five non-blank lines are joined; one blank line may split them, and a
    continuation line may be quoted (clients that wrap the attribution and quote the wrapped
    part: "On … <" / "mailto:…" / "> wrote:"). `inner`: the search starts inside another
    one's lines (quote marks allowed). A weak attribution with the writer's address and a
    time on its first line is a strong one."""
    if index >= len(lines) or _is_blank(lines[index]):
        return None
    if _quoted(lines[index]) and not inner:
        return None
    if budget.next_worded[index] > index + 8:
        return None  # five parts and the blank lines between them: no word of one
    joined = ""
    first = ""
    worded = False
    split = False
    position = index
    for part in range(5):
        if part:
            if position < len(lines) and _is_blank(lines[position]):
                if split:
                    return None  # paragraphs, not one attribution split once
                split = True
                position += 1  # an attribution split by a blank line
                if position < len(lines) and _quoted(lines[position]):
                    return None  # … but not a quote after a blank line
            if position >= len(lines) or _is_blank(lines[position]):
                return None
        line = lines[position]
        if len(line) > _LONGEST_ATTRIBUTION:
            return None
        text = _QUOTE_MARKS.sub("", line) if (part or inner) and _quoted(line) else line
        joined = f"{joined} {text.strip()}".strip()
        first = first or joined
        worded = worded or budget.worded[position]
        ends = budget.ends[position]
        position += 1
        if len(joined) > _LONGEST_ATTRIBUTION:
            return None
        if ends and worded and budget.spend(2 * len(joined)):  # the two patterns
            decorated = DECORATED.match(joined) if joined.endswith(_DASHES) else None
            candidate = decorated.group(1).rstrip(":") + ":" if decorated else joined
            if STRONG_ATTRIBUTION.match(candidate):
                return position, part, _STRONG
            if WEAK_ATTRIBUTION.match(candidate):
                promoted = ADDRESS.search(candidate) and TIME.search(first)
                return position, part, _PROMOTED if promoted else _WEAK
        if part and _quoted(line):
            return None  # the quote itself is no attribution
    return None


def _attribution_span(
    lines: list[str], index: int, budget: _Budget
) -> tuple[int, bool] | None:
    """(line after it, strong) if an attribution starts at `index` and `lines[index]` is
    part of it.

    The first line of a wrapped attribution is the writer's own when it ends like a
    sentence, or when the lines after it are an attribution by themselves ending at the
    same line (`Approve` above `On … wrote:`) — unless those only make a weak one and the
    whole is a strong one (`On … <` above `mia@x> wrote:`), or a weak one made strong by its
    address and time while the first line holds a date's digits (Apple Mail's `On Nov 23,
    2026,` above `at 09:12,` above `Mia <mia@x> wrote:`)."""
    found = _attribution_at(lines, index, budget)
    if found is None:
        return None
    end, parts, strength = found
    if parts == 0:
        return end, strength != _WEAK
    if OWN_SENTENCE.search(lines[index]):
        return None
    dated = strength == _STRONG and _DIGIT.search(lines[index]) is not None
    for later in range(index + 1, end):
        sub = _attribution_at(lines, later, budget, inner=True)
        if sub is not None and sub[0] == end and (
                sub[2] == _STRONG or strength == _WEAK or (sub[2] == _PROMOTED and not dated)):
            return None
    return end, strength != _WEAK


def _own_head(line: str, budget: _Budget) -> str:
    """The writer's words before an attribution that starts mid-line ("reply On … wrote:",
    "text--- On … wrote:"), or ""."""
    if len(line) > _LONGEST_ATTRIBUTION or STRONG_ATTRIBUTION.match(line):
        return ""
    for start in ATTRIBUTION_START.finditer(line):
        if not budget.spend(len(line) - start.start()):
            return ""
        if STRONG_ATTRIBUTION.match(line[start.start() :]):
            return line[: start.start()].rstrip(" \t-\u2013\u2014")
    return ""


def _next_content(lines: list[str], index: int) -> int:
    while index < len(lines) and _is_blank(lines[index]):
        index += 1
    return index


def _is_header_block(lines: list[str], index: int) -> bool:
    """A "From:" (or date: "Date:", "Message du :") line followed within a few lines by
    another mail header label."""
    line = lines[index]
    if not (FROM_LABEL.match(line) or DATE_LABEL.match(line)):
        return False
    return any(HEADER_LABEL.match(later) for later in lines[index + 1 : index + 6])


def _single_line_outlook(line: str) -> bool:
    """Outlook's history header flattened onto one line: "From: x Sent: y To: z Subject: w"."""
    return bool(
        FROM_LABEL.match(line)
        and SINGLE_LINE_OUTLOOK_SENT.search(line[6:])
        and SINGLE_LINE_OUTLOOK_SUBJECT.search(line)
    )


def _wrapped_quote_line(lines: list[str], index: int) -> bool:
    """An unquoted line between two quote lines that is the quote's own line wrapped by a
    client after quoting: a link's end (no words of its own), the rest of a parenthesis the
    line above opened, or a line starting in lower case under a quoted line as long as
    clients wrap at (an answer typed between shorter quoted lines stays the writer's)."""
    if not (0 < index < len(lines) - 1 and _quoted(lines[index - 1])):
        return False
    if not _quoted(lines[index + 1]):
        return False
    line, above = lines[index], _QUOTE_MARKS.sub("", lines[index - 1])
    if len(line) > _LONGEST_ATTRIBUTION or len(above) > _LONGEST_ATTRIBUTION:
        return False
    if not _LETTERS.search(_URL.sub("", line)):
        return True
    if above.count("(") > above.count(")") or above.count("<") > above.count(">"):
        return True
    start = _LOWER_START.match(line)
    return bool(start and start.group(0)[-1].islower() and len(above.strip()) >= 60)


def _is_forward(line: str) -> bool:
    return bool(FORWARD_SEPARATOR.match(line) or BEGIN_FORWARD.match(line))


def _list_footer(lines: list[str], index: int) -> bool:
    """A mailing list's footer: a rule of underscores, then "… mailing list"."""
    if not _UNDERSCORES.match(lines[index]):
        return False
    after = _next_content(lines, index + 1)
    return after < len(lines) and bool(LIST_FOOTER.match(lines[after]))


def _ends_signature(lines: list[str], index: int, budget: _Budget) -> bool:
    """What ends a signature's lines: history or a forwarded message."""
    line = lines[index]
    return bool(
        _quoted(line)
        or _attribution_span(lines, index, budget)
        or SEPARATOR.match(line)
        or _is_forward(line)
        or _is_header_block(lines, index)
        or _single_line_outlook(line)
    )


def extract_reply(text: str, *, forwards: bool = True) -> str:
    """The reply's own text (stripped), without quoted history or signatures. `forwards`:
    a message the writer forwards is kept (theirs to show); without, it is cut as history is
    (what an approver forwards is not what they wrote: not their decision nor their Journal
    message)."""
    lines = normalise_text(text).split("\n")
    budget = _Budget(lines, 4 * len(text) + 50_000)
    kept: list[str] = []
    own = False  # whether `kept` has a line of the writer's that is not blank
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if not stripped:
            kept.append("")
            index += 1
            continue
        if _quoted(line):
            index += 1
            continue
        if SIGNATURE_SEPARATOR.match(line) or MOBILE_SIGNATURE.match(stripped):
            # the signature runs to the next quote (bottom-posting: more may follow) or the end
            index += 1
            while index < len(lines) and not _ends_signature(lines, index, budget):
                index += 1
            continue
        if _is_forward(line):
            if not forwards:
                break
            # a message the writer forwards is their content: kept as it is
            kept.extend(rest.rstrip() for rest in lines[index:])
            own = True
            break
        if SEPARATOR.match(line) or _list_footer(lines, index):
            break
        if _is_header_block(lines, index) or _single_line_outlook(line):
            break
        if _wrapped_quote_line(lines, index):
            index += 1
            continue
        span = _attribution_span(lines, index, budget)
        if span is not None:
            end, strong = span
            head = _own_head(line, budget)
            if head:
                kept.append(head)
                own = True
            after = _next_content(lines, end)
            if after < len(lines) and _quoted(lines[after]):
                index = after  # drop the attribution; the quote goes on the next rounds
                continue
            if strong and own:
                break  # history follows unquoted: nothing after this is the reply
            if strong:
                index = end  # an attribution on top, the reply below it: drop the attribution
                continue
            if head:
                kept.pop()
        kept.append(line.rstrip())
        own = True
        index += 1
    # trailing horizontal rules (Outlook's "____" before its header block) and blank lines
    while kept and (_is_blank(kept[-1]) or RULE_LINE.match(kept[-1])):
        kept.pop()
    first = next((at for at, line in enumerate(kept) if not _is_blank(line)), len(kept))
    result = "\n".join(kept[first:])
    return _BLANK_RUNS.sub("\n\n", result).strip()
