"""The words of a reply that reach the Journal (mail.reading.quotes.extract_reply), for the shapes
and languages of tests/mail/reply_shapes.toml; and the reader's work on hostile bodies,
counted in the characters its patterns are given (bounded by the input's size)."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mail.reading.quotes
from mail.reading.decide import Comment, Reject, decide
from mail.reading.quotes import extract_reply

CASES: list[dict[str, str]] = tomllib.loads(
    (Path(__file__).parents[1] / "reply_shapes.toml").read_text(encoding="utf-8")
)["case"]


def test_the_cases_are_named_once() -> None:
    names = [case["name"] for case in CASES]
    assert len(names) == len(set(names)) and len(names) >= 50


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_the_journal_gets_the_writers_words(case: dict[str, str]) -> None:
    assert extract_reply(case["text"], forwards=False) == case["journal"]
    # the same with the line ends of mail (CRLF)
    assert extract_reply(case["text"].replace("\n", "\r\n"), forwards=False) == \
        case["journal"]


def test_a_reason_above_a_french_outlook_block_is_the_reason() -> None:
    text = next(case["text"] for case in CASES if case["name"] == "fr-outlook-ios")
    assert decide(f"Reject: {text}") == Reject("Merci de corriger mardi.")


def test_a_comment_above_a_vietnamese_attribution_is_the_comment() -> None:
    text = next(case["text"] for case in CASES if case["name"] == "vi-unquoted-history")
    assert decide(text) == Comment("Thứ Ba bị thiếu.")


# --- hostile bodies: the work is bounded by the input's size --------------------------------

MEGABYTE = 1 << 20


def _hostile_bodies() -> Iterator[tuple[str, str]]:
    """(name, body) of about 1 MB each (a quarter of that where its lines are a few
    characters: the suite's time), shaped to make backtracking patterns explode or to make
    every line a candidate for the attribution search."""
    yield "one-long-line", "a" * MEGABYTE
    yield "long-quote-arrows", ">" * MEGABYTE
    yield "arrows-and-spaces", "> " * (MEGABYTE // 2)
    yield "near-attributions", ("On " + "x " * 150 + "wrote\n") * (MEGABYTE // 310)
    yield "attribution-words-repeated", ("On schrieb am écrit escribió " * 12 + "\n") * 3000
    yield "dates-and-at-signs", ("2026-11-23 09:12 a@b " * 18 + "\n") * 3000
    yield "header-labels", ("From: x\nDate: y\nTo: z\n" * 50000)[:MEGABYTE]
    yield "signature-then-lines", "Sent from my iPhone\n" + "not a quote\n" * 22000
    yield "wrapped-quote-lines", ("> " + "word " * 20 + "\nlower case\n") * 8000
    yield "blank-split-parts", ("On\n\nMon:\n\n" * 100000)[: MEGABYTE // 4]
    yield "dashes", ("-- " + "-" * 200 + " x " + "-" * 200 + "\n") * 2500
    yield "underscores", ("_" * 40 + "\n") * 6000
    yield "wrote-and-colons", ("x wrote y " * 4 + "z:\n") * 25000
    # lines the reader keeps or skips one by one (work that grew with their square before)
    yield "blank-lines", "\n" * MEGABYTE + "Approve"
    yield "attributions-between-blanks", (
        "On Mon, 5 Jan 2026 10:00 Mia <mia@x.example> wrote:\n" + "\n" * 30
    ) * (MEGABYTE // 84)
    yield "letters-then-dot", ("Approve" * 50 + "\n" + "On Mon, Mia wrote:\n") * 2000


class _Counting:
    """A compiled pattern that adds up the characters it is asked to look at."""

    def __init__(self, pattern: re.Pattern[str], name: str, seen: dict[str, int]) -> None:
        self._pattern, self._name, self._seen = pattern, name, seen

    def _count(self, string: str) -> None:
        self._seen[self._name] = self._seen.get(self._name, 0) + len(string)

    def match(self, string: str, *args: Any) -> re.Match[str] | None:
        self._count(string)
        return self._pattern.match(string, *args)

    def search(self, string: str, *args: Any) -> re.Match[str] | None:
        self._count(string)
        return self._pattern.search(string, *args)

    def sub(self, repl: str, string: str, *args: Any) -> str:
        self._count(string)
        return self._pattern.sub(repl, string, *args)

    def finditer(self, string: str, *args: Any) -> Iterator[re.Match[str]]:
        self._count(string)
        return self._pattern.finditer(string, *args)


@pytest.fixture
def characters_seen(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Every pattern the reader uses, counting what it is given (by the pattern's name)."""
    seen: dict[str, int] = {}
    for name, value in vars(mail.reading.quotes).items():
        if isinstance(value, re.Pattern):
            monkeypatch.setattr(mail.reading.quotes, name, _Counting(value, name, seen))
    return seen


@pytest.mark.parametrize(("name", "body"), list(_hostile_bodies()), ids=lambda v: str(v)[:30])
def test_a_hostile_body_costs_work_in_proportion_to_its_size(
    name: str, body: str, characters_seen: dict[str, int]
) -> None:
    result = extract_reply(body)
    assert isinstance(result, str)
    # The two attribution patterns (the costly ones: hundreds of characters a line when
    # lines are joined) see at most the search's budget: four times the body (and a
    # constant). Every pattern sees each line a bounded number of times (about 15), and
    # each one's own work on a line is bounded (bounded repeats, no nested unbounded ones:
    # see mail/quote_patterns).
    attribution = sum(characters_seen.get(n, 0) for n in ("STRONG_ATTRIBUTION", "WEAK_ATTRIBUTION"))
    assert attribution <= 4 * len(body) + 60_000, (name, attribution / len(body))
    total = sum(characters_seen.values())
    assert total <= 40 * len(body), (name, total / len(body))
