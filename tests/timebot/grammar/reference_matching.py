"""The quick-entry matching as it was before the TargetIndex (difflib and a pure Python
optimal string alignment, every candidate scored): the reference the property test in
test_matching_index.py compares `match_target` with. Copied verbatim; not used by timebot."""

# ruff: noqa
from __future__ import annotations

import difflib
import functools
import unicodedata
from collections.abc import Callable, Sequence
from typing import TypeVar

from timebot.grammar.matching import (
    MAX_SUGGESTIONS,
    Ambiguous,
    Candidate,
    How,
    Match,
    NoMatch,
    _HOWS,
    _LEVEL,
)

T = TypeVar("T")


@functools.lru_cache(maxsize=65_536)
def fold(text: str) -> str:
    """Lower case, accents dropped, only letters and digits: "Café-Bar 2" → "cafebar2"."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed.casefold() if ch.isalnum())


def edit_distance(a: str, b: str) -> int:
    """Optimal string alignment distance (insert, delete, substitute, swap neighbours)."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[len(b)]


def _allowed_typos(typed: str) -> int:
    return 0 if len(typed) < 3 else 1 if len(typed) < 6 else 2


def segment_score(typed: str, name: str, fuzzy: bool = True) -> tuple[int, int] | None:
    """(level, distance) of a typed segment against a name, or None; lower is better.
    `fuzzy=False`: exact and prefix matches only (the cheap first pass)."""
    t, n = fold(typed), fold(name)
    if not t or not n:
        return None
    if t == n:
        return (_LEVEL["exact"], 0)
    if n.startswith(t):
        return (_LEVEL["prefix"], 0)
    allowed = _allowed_typos(t)
    if not allowed or not fuzzy:
        return None
    # a typo in the whole name, or in a prefix of about the typed length
    distance = min(
        edit_distance(t, n[:length])
        for length in {len(n), *range(max(1, len(t) - 1), min(len(n), len(t) + 1) + 1)}
    )
    return (_LEVEL["fuzzy"], distance) if distance <= allowed else None


def _pick(
    scored: list[tuple[tuple[int, int], T]], key: Callable[[T], str]
) -> Match[T] | Ambiguous[T] | None:
    if not scored:
        return None
    best = min(score for score, _ in scored)
    winners = sorted((value for score, value in scored if score == best), key=key)
    if len(winners) == 1:
        return Match(winners[0], _HOWS[best[0]])
    return Ambiguous(tuple(winners))


def _path_score(
    typed: Sequence[str], path: Sequence[str], fuzzy: bool = True
) -> tuple[int, int] | None:
    level, distance = 0, 0
    for t, n in zip(typed, path, strict=True):
        score = segment_score(t, n, fuzzy)
        if score is None:
            return None
        level, distance = max(level, score[0]), distance + score[1]
    return (level, distance)


def _path_key(candidate: Candidate) -> str:
    return "/".join(fold(s) for s in candidate.path)


def match_target(
    path: Sequence[str], candidates: Sequence[Candidate]
) -> Match[Candidate] | Ambiguous[Candidate] | NoMatch[Candidate]:
    """The candidate that `@a/b/c` names.

    Segments are matched one to one against candidates with as many segments; if none
    matches, against the last segments of longer paths (so `@website` finds Acme/Website).
    """
    typed = tuple(path)
    if not typed:
        return NoMatch()
    # Each pass first without typos: when anything matches exactly or by prefix, no fuzzy
    # match can win (its level is worse), so the costly edit distances are skipped.
    picked: Match[Candidate] | Ambiguous[Candidate] | None = None
    for tail, fuzzy in ((False, False), (False, True), (True, False), (True, True)):
        scored = [
            (score, c)
            for c in candidates
            if (len(c.path) > len(typed) if tail else len(c.path) == len(typed))
            and (score := _path_score(typed, c.path[-len(typed) :], fuzzy)) is not None
        ]
        picked = _pick(scored, _path_key)
        if picked is not None:
            break
    if picked is not None:
        return picked
    # "@acme/xyzzy": the tasks of what the leading segments name
    for known in range(len(typed) - 1, 0, -1):
        siblings = [
            c
            for c in candidates
            if len(c.path) == len(typed) and _path_score(typed[:known], c.path[:known])
        ]
        if siblings:
            last = fold(typed[-1])
            siblings.sort(
                key=lambda c: (
                    -difflib.SequenceMatcher(None, last, fold(c.path[-1])).ratio(),
                    _path_key(c),
                )
            )
            return NoMatch(tuple(siblings[:MAX_SUGGESTIONS]))
    names = {_path_key(c): c for c in candidates}
    typed_key = "/".join(fold(s) for s in typed)
    close = difflib.get_close_matches(typed_key, list(names), n=MAX_SUGGESTIONS, cutoff=0.5)
    return NoMatch(tuple(names[name] for name in close))
