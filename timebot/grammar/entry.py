"""parse_entry: the one grammar of quick time entry, for /time in Slack and for mail."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from timebot.grammar.dates import format_day, match_date
from timebot.grammar.durations import (
    DASHES,
    Amount,
    WallRange,
    format_minutes,
    format_wall,
    match_bare_number,
    match_duration,
    match_range,
)
from timebot.grammar.model import ParsedEntry, ParseError, ParseResult, Problem

#: quote pairs: an opening quote at the start of a token runs to its closing quote
QUOTES = {"“": "”", '"': '"', "«": "»", "„": "“"}
#: entries are separated by these (outside quotes)
SEPARATORS = ";\n"
#: the `·` of the printed-back form separates tokens like a space
DOT = "·"

BILLABLE_WORDS = {"$": True, "billable": True, "!nb": False, "non-billable": False}
BILLABLE_WORDS["nonbillable"] = False
WFH_WORDS = {"#wfh", "wfh"}

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _is_space(ch: str) -> bool:
    return ch == DOT or (ch.isspace() and ch != "\n")


def _is_word_end(ch: str) -> bool:
    return ch == DOT or ch.isspace() or ch == ";"


def read_quoted(text: str, pos: int) -> tuple[int, str]:
    """The quoted string opening at `pos`: its end and content.

    Inside, a backslash escapes the closing quote and a backslash (`\\”`, `\\\\`); any other
    backslash is kept as it is. A quote does not run past the end of the line.
    """
    closer = QUOTES[text[pos]]
    out: list[str] = []
    i = pos + 1
    while i < len(text):
        ch = text[i]
        if ch == "\n":
            break
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in (closer, "\\"):
            out.append(text[i + 1])
            i += 2
            continue
        if ch == closer:
            return i + 1, "".join(out)
        out.append(ch)
        i += 1
    raise Problem(
        "This quote is not closed",
        pos,
        text[pos:i],
        f"End the quoted text with {closer} on the same line.",
    )


@dataclass
class _Entry:
    first: int
    last: int = 0
    duration: Amount | WallRange | None = None
    duration_at: tuple[int, str] | None = None
    day: date | None = None
    target: tuple[str, ...] | None = None
    target_at: tuple[int, str] | None = None
    billable: bool | None = None
    billable_at: tuple[int, str] | None = None
    wfh: bool = False
    #: ("free" | "quoted", text) in the order they were typed
    parts: list[tuple[str, str]] = field(default_factory=list)


class _Scanner:
    def __init__(self, text: str, tz: ZoneInfo, today: date) -> None:
        self.text = text
        self.tz = tz
        self.today = today
        #: the index of the entry being read
        self.index = 0

    def run(self) -> list[ParsedEntry]:
        entries: list[ParsedEntry] = []
        text, i = self.text, 0
        entry: _Entry | None = None
        while True:
            while i < len(text) and _is_space(text[i]):
                i += 1
            if i >= len(text) or text[i] in SEPARATORS:
                if entry is not None:
                    entries.append(self.finish(entry))
                    self.index += 1
                entry = None
                if i >= len(text):
                    return entries
                i += 1
                continue
            if entry is None:
                entry = _Entry(first=i)
            i = self.token(entry, i)
            entry.last = i

    def word_end(self, i: int) -> int:
        j = i
        while j < len(self.text) and not _is_word_end(self.text[j]):
            j += 1
        return j

    def skip_comma(self, i: int) -> int:
        text = self.text
        if i < len(text) and text[i] == "," and (i + 1 == len(text) or _is_word_end(text[i + 1])):
            return i + 1
        return i

    def token(self, entry: _Entry, i: int, endpos: int | None = None) -> int:
        """Read one token at `i` into `entry`; return where it ends.

        With `endpos` (the end of one word), tokens that span spaces are not tried: a
        multi-word match whose slot is taken dissolves into its words, each read alone.
        """
        text = self.text
        limit = len(text) if endpos is None else endpos
        ch = text[i]
        if ch in QUOTES:
            end, content = read_quoted(text, i)
            entry.parts.append(("quoted", content))
            return end
        if ch == "@":
            return self.read_target(entry, i)

        try:
            found_date = match_date(text, i, limit, self.today)
        except Problem as problem:
            if entry.day is None:
                raise
            # After the entry's date, a date-shaped phrase is words, as a valid one is below
            # ("Mar 0" read back from a receipt's words "Mar" and "0").
            return self.dissolve(entry, i, problem.position + len(problem.token))
        if found_date is not None:
            end, day = found_date
            if entry.day is None:
                entry.day = day
                return self.skip_comma(end)
            return self.dissolve(entry, i, end)

        found_range = match_range(text, i, limit)
        if found_range is not None:
            end, wall = found_range
            return self.set_duration(entry, i, end, wall)

        if entry.duration is not None:
            bare_end = match_bare_number(text, i, limit)
            if bare_end is not None:  # "fix 3 bugs", "2026 roadmap": words of the comment
                entry.parts.append(("free", text[i:bare_end]))
                return bare_end
        found_duration = match_duration(text, i, limit)
        if found_duration is not None:
            end, amount = found_duration
            return self.set_duration(entry, i, end, amount)

        end = self.word_end(i)
        word = text[i:end]
        lowered = word.lower()
        if lowered in BILLABLE_WORDS:
            value = BILLABLE_WORDS[lowered]
            if entry.billable is not None and entry.billable != value and entry.billable_at:
                raise Problem(
                    "Both billable and non-billable",
                    i,
                    word,
                    f"“{entry.billable_at[1]}” came first; keep one of the two.",
                )
            entry.billable, entry.billable_at = value, (i, word)
            return end
        if lowered in WFH_WORDS:
            entry.wfh = True
            return end
        if word[0].isdecimal():
            raise Problem("I could not read this", i, word, _digit_hint(word))
        entry.parts.append(("free", word))
        return end

    def dissolve(self, entry: _Entry, i: int, end: int) -> int:
        """Read the words of text[i:end] one by one (a multi-word match whose slot is taken)."""
        if self.word_end(i) >= end:  # a single word
            entry.parts.append(("free", self.text[i:end]))
            return end
        j = i
        while j < end:
            while j < end and _is_space(self.text[j]):
                j += 1
            if j < end:
                j = self.token(entry, j, self.word_end(j))
        return end

    def set_duration(self, entry: _Entry, i: int, end: int, value: Amount | WallRange) -> int:
        token = self.text[i:end]
        if entry.duration is not None and entry.duration_at is not None:
            if self.word_end(i) < end:
                return self.dissolve(entry, i, end)
            raise Problem(
                "A second duration",
                i,
                token,
                f"The duration is “{entry.duration_at[1]}”; put the comment in quotes if"
                " this is part of it.",
            )
        entry.duration, entry.duration_at = value, (i, token)
        return self.skip_comma(end)

    def read_target(self, entry: _Entry, i: int) -> int:
        text = self.text
        segments: list[str] = []
        j = i + 1
        while True:
            if j < len(text) and text[j] in QUOTES:
                j, segment = read_quoted(text, j)
                if j < len(text) and not (_is_word_end(text[j]) or text[j] in "/,"):
                    raise Problem(
                        "Expected / or a space after the quoted name",
                        i,
                        text[i : self.word_end(j)],
                        'Write e.g. @"Acme Corp"/website.',
                    )
            else:
                start = j
                while j < len(text) and not (_is_word_end(text[j]) or text[j] == "/"):
                    j += 1
                segment = text[start:j]
                if segment.endswith(",") and (j == len(text) or _is_word_end(text[j])):
                    segment = segment[:-1]
            if not segment.strip():
                raise Problem(
                    "A project name is missing",
                    i,
                    text[i : self.word_end(i)] or "@",
                    "Write e.g. @acme or @acme/website/design.",
                )
            segments.append(segment)
            if j < len(text) and text[j] == "/":
                j += 1
                continue
            break
        j = self.skip_comma(j)
        token = text[i:j]
        if entry.target is not None and entry.target_at is not None:
            raise Problem(
                "A second project",
                i,
                token,
                f"The entry is already for “{entry.target_at[1]}”; separate entries with ;.",
            )
        entry.target, entry.target_at = tuple(segments), (i, token)
        return j

    def finish(self, entry: _Entry) -> ParsedEntry:
        token = self.text[entry.first : entry.last]
        if entry.duration is None:
            raise Problem(
                "How long? No duration in this entry",
                entry.first,
                token,
                "Start with a duration, e.g. 2h, 90m, 1:30 or 9:00-11:30.",
            )
        day = entry.day or self.today
        start: datetime | None = None
        end: datetime | None = None
        if isinstance(entry.duration, WallRange):
            start, end, elapsed_ms = self.place_range(entry, day, entry.duration)
            duration_ms: int | None = elapsed_ms
            days = None
            start_ms = _utc_ms(start)
        else:
            duration_ms, days = entry.duration.duration_ms, entry.duration.days
            start_ms = _utc_ms(datetime.combine(day, time(0), self.tz))
        words = [text for kind, text in entry.parts if kind == "free"]
        if entry.target is None:
            absence_words = tuple(words)
            comment_parts = [text for kind, text in entry.parts if kind == "quoted"]
        else:
            absence_words = ()
            comment_parts = [text for _, text in entry.parts]
        comment = " ".join(" ".join(comment_parts).split()) or None
        return ParsedEntry(
            day=day,
            duration_ms=duration_ms,
            days=days,
            start=start,
            end=end,
            start_ms=start_ms,
            target=entry.target,
            absence_words=absence_words,
            wfh=entry.wfh,
            billable=entry.billable,
            comment=comment,
            span=(entry.first, entry.last),
        )

    def place_range(
        self, entry: _Entry, day: date, wall: WallRange
    ) -> tuple[datetime, datetime, int]:
        assert entry.duration_at is not None
        position, token = entry.duration_at
        start = self.local(day, wall.start_minute, position, token)
        end = self.local(day, wall.end_minute, position, token)
        elapsed_ms = (end.astimezone(UTC) - start.astimezone(UTC)) // timedelta(milliseconds=1)
        if elapsed_ms <= 0:  # pragma: no cover - wall end > start keeps real time positive
            raise Problem("The range ends before it starts", position, token)
        if wall.stated is not None and wall.stated.duration_ms != elapsed_ms:
            raise Problem(
                f"This range lasts {format_minutes(elapsed_ms // 60_000)}"
                f", not {format_minutes(wall.stated.minutes or 0)}",
                position,
                token,
                "Leave the duration in brackets out, or correct it.",
            )
        return start, end, elapsed_ms

    def local(self, day: date, minute: int, position: int, token: str) -> datetime:
        """The aware time `minute` minutes of wall clock after midnight of `day`.

        A time that occurs twice (the hour repeated when clocks go back) is its first
        occurrence; a time skipped when clocks go forward is an error.
        """
        if minute == 24 * 60:
            return datetime.combine(day + timedelta(days=1), time(0), self.tz)
        wall = datetime.combine(day, time(minute // 60, minute % 60), self.tz)
        if wall.astimezone(UTC).astimezone(self.tz).replace(tzinfo=None) != wall.replace(
            tzinfo=None
        ):
            raise Problem(
                f"{format_wall(minute)} does not exist on {format_day(day)} in {self.tz.key}"
                " (the clocks go forward)",
                position,
                token,
                "Check the times; that hour is skipped.",
            )
        return wall


def _utc_ms(moment: datetime) -> int:
    return (moment.astimezone(UTC) - _EPOCH) // timedelta(milliseconds=1)


def _digit_hint(word: str) -> str:
    if word.rstrip(",").endswith(tuple(DASHES)):
        return "A range needs an end time, e.g. 9-11:30 or 9am-1pm."
    if any(ch in word for ch in DASHES):
        return "Write a range like 9:00-11:30 or 9am-1pm, or a date like 2026-03-15."
    if word.count(".") >= 2 or word.endswith("."):
        return "Write a date like 15.03. or 15.03.2026."
    lowered = word.lower()
    if lowered.endswith(("am", "pm", "a.m.", "p.m.")) or ":" in word:
        return "A time of day needs an end: write a range like 9am-1pm, or a duration like 2h."
    return (
        "Durations look like 2h, 2h30, 90m, 1.5h or 1:30; put the comment in quotes if this is"
        " part of it."
    )


def parse_entry(text: str, tz: ZoneInfo | str, today: date) -> ParseResult:
    """Read the entries in `text` (separated by ; or by lines), or say what was not understood.

    `tz` is the person's zone, `today` the current date there. Pure: the same arguments give
    the same result.
    """
    zone = tz if isinstance(tz, ZoneInfo) else ZoneInfo(tz)
    scanner = _Scanner(text, zone, today)
    try:
        return scanner.run()
    except Problem as problem:
        return ParseError(
            message=problem.message,
            position=problem.position,
            token=problem.token,
            hint=problem.hint,
            entry_index=scanner.index,
        )
