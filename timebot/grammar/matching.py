"""Resolving what was typed against what the person may log on: pure, case- and accent-blind.

Each typed segment matches a name exactly, by prefix, or (failing both) fuzzily, within a
small edit distance; the best level wins if exactly one candidate reaches it, otherwise the
candidates at that level are `Ambiguous` (buttons in Slack, a list in the mail receipt).
`segment_score` is the rule; `match_target` applies it through a `TargetIndex`
(`target_index.py`: sorted names, RapidFuzz for the typos), built once per catalogue.
"""

from __future__ import annotations

import difflib
import functools
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from rapidfuzz.distance import OSA

from timebot.grammar.target_index import Hit, TargetIndex, allowed_typos

T = TypeVar("T")

#: at most this many names are suggested when nothing matches
MAX_SUGGESTIONS = 5

Kind = Literal["project", "task"]
How = Literal["exact", "prefix", "fuzzy"]
_HOWS: tuple[How, ...] = ("exact", "prefix", "fuzzy")
_LEVEL: dict[How, int] = {how: level for level, how in enumerate(_HOWS)}


@dataclass(frozen=True)
class Candidate:
    """A project (path: its name, or the names down from the top project) or a task."""

    id: str
    path: tuple[str, ...]
    kind: Kind


@dataclass(frozen=True)
class AbsenceType:
    id: str
    name: str


@dataclass(frozen=True)
class Match(Generic[T]):
    value: T
    how: How
    #: for match_absence: the words after the absence type's name (they belong to the comment)
    rest: tuple[str, ...] = ()


@dataclass(frozen=True)
class Ambiguous(Generic[T]):
    candidates: tuple[T, ...]


@dataclass(frozen=True)
class NoMatch(Generic[T]):
    #: the closest names, to suggest
    suggestions: tuple[T, ...] = ()


@functools.lru_cache(maxsize=65_536)
def fold(text: str) -> str:
    """Lower case, accents dropped, only letters and digits: "Café-Bar 2" → "cafebar2"."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed.casefold() if ch.isalnum())


def edit_distance(a: str, b: str) -> int:
    """Optimal string alignment distance (insert, delete, substitute, swap neighbours)."""
    return int(OSA.distance(a, b))


_allowed_typos = allowed_typos


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


#: the indexes of the last catalogues matched against: a person's catalogue is read again for
#: each message, and is most often the one they had before (then its index is reused)
_INDEXES: OrderedDict[tuple[Candidate, ...], TargetIndex] = OrderedDict()
KEPT_INDEXES = 8


def target_index(candidates: Sequence[Candidate]) -> TargetIndex:
    """What `match_target` precomputes over `candidates`, built once per catalogue (the same
    candidates again find the index built for them while it is among the last few)."""
    key = tuple(candidates)
    found = _INDEXES.get(key)
    if found is None:
        found = _INDEXES[key] = TargetIndex(key, fold)
        while len(_INDEXES) > KEPT_INDEXES:
            _INDEXES.popitem(last=False)
    else:
        _INDEXES.move_to_end(key)
    return found


def match_target(
    path: Sequence[str], candidates: Sequence[Candidate] | TargetIndex
) -> Match[Candidate] | Ambiguous[Candidate] | NoMatch[Candidate]:
    """The candidate that `@a/b/c` names (`candidates`: a list, or its `target_index`).

    Segments are matched one to one against candidates with as many segments; if none
    matches, against the last segments of longer paths (so `@website` finds Acme/Website).
    """
    typed = tuple(path)
    if not typed:
        return NoMatch()
    index = candidates if isinstance(candidates, TargetIndex) else target_index(candidates)
    folded = tuple(fold(s) for s in typed)
    cache: dict[tuple[str, bool], list[Hit]] = {}
    # Each pass first without typos: when anything matches exactly or by prefix, no fuzzy
    # match can win (its level is worse), so the typo pass is skipped.
    for tail, fuzzy in ((False, False), (False, True), (True, False), (True, True)):
        picked = _pick_numbers(index, index.scored(folded, len(typed), tail, fuzzy, cache))
        if picked is not None:
            return picked
    # "@acme/xyzzy": the tasks of what the leading segments name, closest first
    for known in range(len(typed) - 1, 0, -1):
        siblings = sorted(c for _, c in index.scored(folded[:known], len(typed), False, True,
                                                     cache))
        if siblings:
            closest = index.closest_last(folded[-1], siblings, MAX_SUGGESTIONS)
            return NoMatch(tuple(index.candidates[c] for c in closest))
    return NoMatch(tuple(index.close_matches("/".join(folded), MAX_SUGGESTIONS, 0.5)))


def _pick_numbers(
    index: TargetIndex, scored: list[tuple[tuple[int, int], int]]
) -> Match[Candidate] | Ambiguous[Candidate] | None:
    """`_pick` over candidate numbers, ordered by the index's path keys."""
    if not scored:
        return None
    best = min(score for score, _ in scored)
    winners = sorted((c for score, c in scored if score == best),
                     key=lambda c: (index.keys[c], c))
    if len(winners) == 1:
        return Match(index.candidates[winners[0]], _HOWS[best[0]])
    return Ambiguous(tuple(index.candidates[c] for c in winners))


def match_absence(
    words: Sequence[str], absence_types: Sequence[AbsenceType]
) -> Match[AbsenceType] | Ambiguous[AbsenceType] | NoMatch[AbsenceType]:
    """The absence type the leading words name ("sick leave", "vac"); `rest` has the others.

    The longest run of leading words that names a type exactly or by prefix wins ("vacation
    family trip" is Vacation with the rest "family trip"); only if none does, the longest run
    that names one with a typo ("vacaton").
    """
    for max_level in (_LEVEL["prefix"], _LEVEL["fuzzy"]):
        for length in range(len(words), 0, -1):
            phrase = " ".join(words[:length])
            scored = [
                (score, t)
                for t in absence_types
                if (score := segment_score(phrase, t.name)) is not None and score[0] <= max_level
            ]
            picked = _pick(scored, lambda t: fold(t.name))
            if isinstance(picked, Match):
                return Match(picked.value, picked.how, tuple(words[length:]))
            if picked is not None:
                return picked
    names = {fold(t.name): t for t in absence_types}
    typed = fold("".join(words))
    close = difflib.get_close_matches(typed, list(names), n=MAX_SUGGESTIONS, cutoff=0.5)
    return NoMatch(tuple(names[name] for name in close))
