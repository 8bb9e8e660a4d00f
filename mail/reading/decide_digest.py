"""What a reply to a daily digest decides — pure: `read_digest_reply(text)` gives the
commands, `plan_digest(commands, count)` what becomes of each of the digest's numbered items.

The reply's own text is read line by line (`mail.reading.quotes.extract_reply` first: no quoted
history, no signature). Its first non-blank line must be a command, or the reply decides
nothing (a bare "approve" is not enough: nothing is approved by accident). Commands, in the
words `mail.reading.decide` knows (English, French, German, Spanish, Dutch), case and accents
ignored:

- `approve all` (also "all approved, thanks", "tout approuver", "alle genehmigen",
  "aprobar todo"): every listed item that no other command names;
- `approve 1 3`, `approve 1, 3 and 4`, `approve #2`: those items;
- `reject 2 <reason>` (also `reject 2: …`, `reject 1 3 - …`, `reject all <reason>`): the reason
  is the rest of the line and the lines after it, up to the next command line. A rejection
  without a reason rejects nothing (its items are reported).

Further command lines add to the first. After an approval, a line that is no command ends the
reading (it is not a decision). An item named by two commands is decided by neither (reported);
a number the digest did not list is reported (the first ten; the rest counted). At most
fifty command lines are read.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from mail.reading.decide import _APPROVE, _LEAD, _POLITE_WORDS, _REJECT, _WORD, _fold, _skip_words
from mail.reading.quotes import extract_reply

Action = Literal["approve", "reject"]
MAX_COMMANDS = 50  # command lines read from one reply
MAX_REPORTED = 10  # numbers the digest did not list, named in the receipt

_ALL_WORDS = {
    "all", "everything", "tout", "tous", "toutes", "alle", "alles", "todo", "todos",
    "todas", "allemaal",
}  # fmt: skip
_NUMBER = re.compile(r"#?(\d{1,4})(?!\d)")
_JOINER = re.compile(r"(?:\s*(?:,|;|&|\+|/|\band\b|\bet\b|\bund\b|\by\b|\ben\b)\s*|\s+)")
_SEPARATORS = re.compile(r"^[\s:;,.!\-\u2013\u2014=>)*_]+")


@dataclass(frozen=True)
class DigestCommand:
    action: Action
    numbers: tuple[int, ...] | None  # None: all
    reason: str = ""


@dataclass(frozen=True)
class ItemPlan:
    number: int  # 1-based, as the digest numbered it
    action: Action
    reason: str = ""


@dataclass(frozen=True)
class DigestPlan:
    items: tuple[ItemPlan, ...]  # in the digest's order
    unknown: tuple[int, ...]  # numbers the digest did not list
    twice: tuple[int, ...]  # items named by two commands: decided by neither
    no_reason: tuple[int, ...]  # items a rejection without a reason named


def _numbers(rest: str) -> tuple[tuple[int, ...], str]:
    """The item numbers at the start of `rest` (folded), and what follows them."""
    found: list[int] = []
    position = 0
    while len(found) < 100:
        joined = _JOINER.match(rest, position) if found else None
        start = joined.end() if joined else position
        start += len(rest[start:]) - len(rest[start:].lstrip())
        number = _NUMBER.match(rest, start)
        if number is None:
            break
        found.append(int(number.group(1)))
        position = number.end()
    return tuple(found), rest[position:]


def _only_polite(text: str) -> bool:
    words = [w.strip("'") for w in re.findall(_WORD, text)]
    return all(w in _POLITE_WORDS or w in _ALL_WORDS for w in words)


def _approve_all(folded: str) -> bool:
    """Approval phrases, politeness words and at least one all-word, in any order."""
    rest, approving, all_word = folded, False, False
    while True:
        rest = _LEAD.sub("", rest)
        if not rest:
            return approving and all_word
        found = _APPROVE.match(rest)
        if found:
            approving, rest = True, rest[found.end():]
            continue
        word = re.match(_WORD, rest)
        if word is None:
            return False
        text = word.group(0).strip("'")
        if text in _ALL_WORDS:
            all_word = True
        elif text not in _POLITE_WORDS:
            return False
        rest = rest[word.end():]


def _command(line: str) -> DigestCommand | None:
    """The command a line states, or None (its reason is the line's own rest)."""
    folded = _LEAD.sub("", _fold(line))
    if _approve_all(folded):
        return DigestCommand("approve", None)
    found = _APPROVE.match(folded)
    if found:
        numbers, after = _numbers(folded[found.end():])
        if numbers and _only_polite(after):
            return DigestCommand("approve", numbers)
        return None
    found = _REJECT.match(folded)
    if not found:
        return None
    after_word = folded[found.end():]
    all_word = re.match(r"\s*(\w+)", after_word)
    if all_word and all_word.group(1) in _ALL_WORDS:
        chosen: tuple[int, ...] | None = None
        used = found.end() + all_word.end()
    else:
        listed, after = _numbers(after_word)
        if not listed:
            return None
        chosen, used = listed, len(folded) - len(after)
    # the reason in the line's own letters: skip as many words as the command took
    words = len(re.findall(_WORD, folded[:used]))
    original = _LEAD.sub("", unicodedata.normalize("NFC", line))
    reason = _SEPARATORS.sub("", _skip_words(original, words))
    return DigestCommand("reject", chosen, reason.strip())


def read_digest_reply(reply_text: str) -> tuple[DigestCommand, ...]:
    """The commands of a reply to a digest (empty: it decides nothing)."""
    lines = extract_reply(reply_text, forwards=False).split("\n")
    commands: list[DigestCommand] = []
    reason_lines: list[str] | None = None  # the open rejection's reason

    def close() -> None:
        if reason_lines is not None and commands:
            last = commands[-1]
            reason = re.sub(r"\n{3,}", "\n\n", "\n".join(reason_lines).strip())
            commands[-1] = DigestCommand(last.action, last.numbers, reason)

    for line in lines:
        if len(commands) >= MAX_COMMANDS:
            break
        if not line.strip():
            if reason_lines is not None:
                reason_lines.append("")
            continue
        command = _command(line)
        if command is None:
            if reason_lines is not None:
                reason_lines.append(line.rstrip())
                continue
            break  # not a command: the first line (no decision) or after an approval
        close()
        commands.append(command)
        reason_lines = [command.reason] if command.action == "reject" else None
    close()
    return tuple(commands)


def plan_digest(commands: tuple[DigestCommand, ...], count: int) -> DigestPlan:
    """What each of the digest's `count` items gets: an explicit number wins over "all"."""
    named: dict[int, list[DigestCommand]] = {}
    unknown: dict[int, None] = {}  # in the reply's order, once each
    for command in commands:
        for number in command.numbers or ():
            if 1 <= number <= count:
                if command not in named.setdefault(number, []):
                    named[number].append(command)
            else:
                unknown[number] = None
    everything = [command for command in commands if command.numbers is None]
    items: list[ItemPlan] = []
    twice: list[int] = []
    no_reason: list[int] = []
    for number in range(1, count + 1):
        mine = named.get(number) or everything
        if not mine:
            continue
        if len({(c.action, c.reason) for c in mine}) > 1:
            twice.append(number)
            continue
        command = mine[0]
        if command.action == "reject" and not re.search(r"\w", command.reason):
            no_reason.append(number)
            continue
        items.append(ItemPlan(number, command.action, command.reason))
    return DigestPlan(tuple(items), tuple(unknown), tuple(twice), tuple(no_reason))


def reported(unknown: tuple[int, ...]) -> tuple[tuple[int, ...], int]:
    """The unknown numbers a receipt names, and how many more it only counts."""
    return unknown[:MAX_REPORTED], max(0, len(unknown) - MAX_REPORTED)
