"""What matching `@…` precomputes once per catalogue, so that an entry costs about what its
matches cost, not a pass over every target (`matching.match_target` scores with it).

- Every distinct folded segment name, sorted: the names a typed segment is a prefix of are
  one range of it (`bisect`), the exact name its first.
- The typo pass compares a typed segment in C (RapidFuzz's optimal string alignment
  distance, with the cut-off of the typos allowed) against the distinct prefixes of the
  names of lengths len(typed) - 1 to len(typed) + 1 (a shorter name is its own prefix),
  remembered per length, and the whole names two longer: the lengths
  `matching.segment_score` compares. Only the names within the cut-off come back to Python.
- For each position counted from the end of a path, the targets by their name there (and
  their running count by name), so that the targets a typed path may name are found from
  its most selective segment; its other segments are scored against those targets alone.
- The suggestions when nothing matches (`close_matches`) are difflib's own
  `get_close_matches`, computed only for the names RapidFuzz's ratio (an upper bound of
  difflib's) does not rule out, best bound first.
"""

from __future__ import annotations

import bisect
import difflib
import heapq
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA

T = TypeVar("T")

#: (level, distance): level 0 exact, 1 prefix, 2 fuzzy
Score = tuple[int, int]
#: names low…high - 1 (by number) match with this score
Hit = tuple[int, int, Score]
#: one candidate scored by `point_score` costs about as much as comparing this many names
#: in RapidFuzz's passes of `segment_hits` over every name
_POINTS_PER_NAME = 8


def allowed_typos(typed: str) -> int:
    return 0 if len(typed) < 3 else 1 if len(typed) < 6 else 2


class TargetIndex:
    """The folded paths of a sequence of candidates (any objects with a `path` of names)."""

    def __init__(self, candidates: Sequence[Any], fold: Callable[[str], str]) -> None:
        self.candidates = list(candidates)
        self.fold = fold
        folded = [tuple(fold(s) for s in c.path) for c in self.candidates]
        self.names = sorted({s for path in folded for s in path if s})
        number = {name: i for i, name in enumerate(self.names)}
        #: per candidate, the number of each segment's name (-1: folds to nothing)
        self.paths = [tuple(number.get(s, -1) for s in path) for path in folded]
        self.keys = ["/".join(path) for path in folded]
        self.by_length: dict[int, tuple[list[int], list[str]]] = {}
        for i, name in enumerate(self.names):
            numbers, names = self.by_length.setdefault(len(name), ([], []))
            numbers.append(i)
            names.append(name)
        self._prefixes: dict[int, tuple[list[str], list[tuple[int, int]]]] = {}
        self._by_offset: dict[tuple[int, int, bool], tuple[dict[int, list[int]], list[int]]] = {}
        self._close: tuple[list[str], dict[str, Any]] | None = None

    # -- one typed segment against every name ----------------------------------------------

    def _prefix_groups(self, length: int) -> tuple[list[str], list[tuple[int, int]]]:
        """The distinct `name[:length]`, each with the range of names that start so."""
        found = self._prefixes.get(length)
        if found is None:
            prefixes: list[str] = []
            ranges: list[tuple[int, int]] = []
            for i, name in enumerate(self.names):
                prefix = name[:length]
                if prefixes and prefixes[-1] == prefix:
                    ranges[-1] = (ranges[-1][0], i + 1)
                else:
                    prefixes.append(prefix)
                    ranges.append((i, i + 1))
            found = self._prefixes[length] = (prefixes, ranges)
        return found

    def segment_hits(self, typed: str, fuzzy: bool) -> list[Hit]:
        """The names a folded typed segment matches, as ranges of name numbers with
        `segment_score`'s (level, distance); a name may be in several (the best counts)."""
        if not typed:
            return []
        names = self.names
        start = bisect.bisect_left(names, typed)
        end = start
        while end < len(names) and names[end].startswith(typed):
            end += 1
        hits: list[Hit] = []
        if start < end:
            if names[start] == typed:
                hits.append((start, start + 1, (0, 0)))
                start += 1
            if start < end:
                hits.append((start, end, (1, 0)))
        allowed = allowed_typos(typed)
        if not fuzzy or not allowed:
            return hits
        for length in range(max(1, len(typed) - 1), len(typed) + 2):
            prefixes, ranges = self._prefix_groups(length)
            for _, distance, at in process.extract(typed, prefixes, scorer=OSA.distance,
                                                   score_cutoff=allowed, limit=None):
                hits.append((*ranges[at], (2, int(distance))))
        # A name of length len(typed) - 1 … + 1, or shorter, is its own prefix above: only
        # the whole names two longer (two typos allowed) are left.
        for length in range(len(typed) + 2, len(typed) + allowed + 1):
            numbers, same_length = self.by_length.get(length, ([], []))
            for _, distance, at in process.extract(typed, same_length, scorer=OSA.distance,
                                                   score_cutoff=allowed, limit=None):
                hits.append((numbers[at], numbers[at] + 1, (2, int(distance))))
        return hits

    def point_score(self, typed: str, number: int, fuzzy: bool) -> Score | None:
        """`segment_score` of a folded typed segment against one name (by number)."""
        if number < 0 or not typed:
            return None
        name = self.names[number]
        if name == typed:
            return (0, 0)
        if name.startswith(typed):
            return (1, 0)
        allowed = allowed_typos(typed)
        if not fuzzy or not allowed:
            return None
        distance = min(
            OSA.distance(typed, name[:length], score_cutoff=allowed)
            for length in {len(name), *range(max(1, len(typed) - 1),
                                             min(len(name), len(typed) + 1) + 1)}
        )
        return (2, int(distance)) if distance <= allowed else None

    # -- typed paths against candidates ----------------------------------------------------

    def _at_offset(
        self, offset: int, length: int, longer: bool
    ) -> tuple[dict[int, list[int]], list[int]]:
        """The candidates with `length` segments (more: `longer`) by the name `offset`
        segments before the end of their path, and the running count of them by name
        number (how many a range of names brings)."""
        key = (offset, length, longer)
        found = self._by_offset.get(key)
        if found is None:
            by_name: dict[int, list[int]] = {}
            for c, path in enumerate(self.paths):
                if (len(path) > length if longer else len(path) == length) \
                        and path[-1 - offset] >= 0:
                    by_name.setdefault(path[-1 - offset], []).append(c)
            running = [0]
            for i in range(len(self.names)):
                running.append(running[-1] + len(by_name.get(i, ())))
            found = self._by_offset[key] = (by_name, running)
        return found

    def scored(
        self, typed: Sequence[str], length: int, longer: bool, fuzzy: bool,
        cache: dict[tuple[str, bool], list[Hit]],
    ) -> list[tuple[Score, int]]:
        """(score, candidate number) of the candidates whose path has `length` segments (or
        more: `longer`) and whose window `path[-length:]` starts with segments that the
        folded `typed` match one to one (`typed` may be shorter than `length`): the
        (highest level, summed distance) of `segment_score` over them. The candidates come
        from the segment that brings the fewest; the others are scored for those alone.
        `cache` remembers each typed segment's hits for the rest of the entry."""
        # typed[i] faces the name length - 1 - i segments before the end of the path
        offsets = [length - 1 - i for i in range(len(typed))]
        hits: dict[int, list[Hit]] = {}
        costs: dict[int, int] = {}
        # Longest typed segments first (the likeliest to be selective); once the anchor
        # brings few enough candidates, scoring them is cheaper than finding every name the
        # next segment matches (a few passes of RapidFuzz over every name).
        for i in sorted(range(len(typed)), key=lambda i: (-len(typed[i]), i)):
            if costs and fuzzy and min(costs.values()) * _POINTS_PER_NAME < len(self.names):
                break
            key = (typed[i], fuzzy)
            if key not in cache:
                cache[key] = self.segment_hits(typed[i], fuzzy)
            if not cache[key]:
                return []
            hits[i] = cache[key]
            running = self._at_offset(offsets[i], length, longer)[1]
            costs[i] = sum(running[high] - running[low] for low, high, _ in hits[i])
        anchor = min(costs, key=lambda i: (costs[i], i))
        best: dict[int, Score] = {}
        for low, high, score in hits[anchor]:
            for i in range(low, high):
                if score < best.get(i, (3, 0)):
                    best[i] = score
        by_name = self._at_offset(offsets[anchor], length, longer)[0]
        points: dict[tuple[int, int], Score | None] = {}
        results: list[tuple[Score, int]] = []
        for name, score in best.items():
            for c in by_name.get(name, ()):
                path = self.paths[c]
                level, distance = score
                for i, off in enumerate(offsets):
                    if i == anchor:
                        continue
                    number = path[-1 - off]
                    if (i, number) not in points:
                        points[(i, number)] = self.point_score(typed[i], number, fuzzy)
                    other = points[(i, number)]
                    if other is None:
                        break
                    level, distance = max(level, other[0]), distance + other[1]
                else:
                    results.append(((level, distance), c))
        return results

    # -- suggestions -----------------------------------------------------------------------

    def closest_last(self, typed: str, numbers: list[int], n: int) -> list[int]:
        """The `n` candidates (by number) whose last segment is closest to the folded `typed`
        by difflib's ratio (`SequenceMatcher(None, typed, name)`), ties by path key, then
        by their order in `numbers`: sorting them all by (-ratio, key) would give the same
        first `n`; difflib runs only where RapidFuzz's ratio (its upper bound) leaves room."""
        lasts = {c: self.names[self.paths[c][-1]] if self.paths[c][-1] >= 0 else ""
                 for c in numbers}
        distinct = list(dict.fromkeys(lasts.values()))
        bound = {name: score / 100 for name, score, _ in process.extract(
            typed, distinct, scorer=fuzz.ratio, limit=None)} if typed else {}
        order = sorted(range(len(numbers)),
                       key=lambda i: (-bound.get(lasts[numbers[i]], 1.0), i))
        matcher = difflib.SequenceMatcher()
        matcher.set_seq1(typed)
        ratios: dict[str, float] = {}
        best: list[tuple[float, str, int]] = []  # (ratio, key, position) of the best so far
        for i in order:
            c = numbers[i]
            name = lasts[c]
            if len(best) >= n and bound.get(name, 1.0) + 1e-9 < best[n - 1][0]:
                break
            if name not in ratios:
                matcher.set_seq2(name)
                ratios[name] = matcher.ratio()
            best.append((ratios[name], self.keys[c], i))
            best.sort(key=lambda item: (-item[0], item[1], item[2]))
            del best[n:]
        return [numbers[i] for _, _, i in best]

    def close_matches(self, typed_key: str, n: int, cutoff: float) -> list[Any]:
        """`difflib.get_close_matches(typed_key, keys, n, cutoff)` over the candidates' path
        keys (the last candidate of each key), the same answer, computed for fewer keys."""
        if not typed_key:  # RapidFuzz scores empty strings 0: difflib itself
            keys = list(dict.fromkeys(self.keys))
            last = {key: c for key, c in zip(self.keys, self.candidates, strict=True)}
            return [last[k] for k in difflib.get_close_matches(typed_key, keys, n, cutoff)]
        if self._close is None:
            by_key: dict[str, Any] = {}
            for key, candidate in zip(self.keys, self.candidates, strict=True):
                by_key[key] = candidate
            self._close = (list(by_key), by_key)
        keys, by_key = self._close
        bounds = process.extract(typed_key, keys, scorer=fuzz.ratio,
                                 score_cutoff=max(0.0, cutoff * 100 - 1e-6), limit=None)
        best: list[tuple[float, str]] = []
        matcher = difflib.SequenceMatcher()
        matcher.set_seq2(typed_key)
        for key, bound, _ in bounds:  # best bound first
            if len(best) == n and bound / 100 + 1e-9 < best[0][0]:
                break
            matcher.set_seq1(key)
            ratio = matcher.ratio()
            if ratio >= cutoff:
                if len(best) < n:
                    heapq.heappush(best, (ratio, key))
                elif (ratio, key) > best[0]:
                    heapq.heapreplace(best, (ratio, key))
        return [by_key[key] for _, key in sorted(best, reverse=True)]
