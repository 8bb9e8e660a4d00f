"""match_target through the TargetIndex (RapidFuzz) answers as the former implementation
(reference_matching: difflib, every candidate scored) on generated catalogues and typing:
exact, prefix and mistyped paths, tails of longer paths, names nothing matches."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.timebot.grammar import reference_matching
from timebot.grammar import Candidate, match_target
from timebot.grammar.matching import target_index

#: few letters: names share prefixes, collide after folding and lie within a typo or two
letters = st.text(alphabet="abcé -", min_size=0, max_size=9)
names = st.one_of(letters, st.sampled_from(["Acme", "ACME", "Website", "webshop", "Café",
                                            "cafe", "web", "Web site", "---", ""]))
paths = st.lists(names, min_size=1, max_size=3).map(tuple)
catalogues = st.lists(paths, max_size=25).map(
    lambda ps: [Candidate(f"c{i}", p, "task" if len(p) > 1 else "project")
                for i, p in enumerate(ps)])


def _typo(name: str, data: st.DataObject) -> str:
    if not name:
        return name
    at = data.draw(st.integers(0, len(name) - 1))
    kind = data.draw(st.sampled_from(["drop", "swap", "add", "change", "cut", "same"]))
    if kind == "drop":
        return name[:at] + name[at + 1:]
    if kind == "swap" and at + 1 < len(name):
        return name[:at] + name[at + 1] + name[at] + name[at + 2:]
    if kind == "add":
        return name[:at] + data.draw(st.sampled_from("abcx")) + name[at:]
    if kind == "change":
        return name[:at] + data.draw(st.sampled_from("abcx")) + name[at + 1:]
    if kind == "cut":
        return name[:at + 1]
    return name


@settings(max_examples=400, deadline=None)
@given(catalogues, st.data())
def test_the_index_answers_as_before(candidates: list[Candidate], data: st.DataObject) -> None:
    index = target_index(candidates)
    typed_paths = [data.draw(st.lists(names, min_size=1, max_size=3))]
    if candidates:
        chosen = data.draw(st.sampled_from(candidates)).path
        start = data.draw(st.integers(0, len(chosen) - 1))
        typed_paths.append([_typo(s, data) for s in chosen[start:]])
        typed_paths.append([*chosen[start:-1], "xyz"] if len(chosen) > 1 else ["xyz"])
    for typed in typed_paths:
        expected = reference_matching.match_target(typed, candidates)
        assert match_target(typed, index) == expected, typed
        assert match_target(typed, candidates) == expected, typed


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="abcd/", min_size=1, max_size=8), min_size=0, max_size=40),
       st.text(alphabet="abcd/", max_size=8))
def test_the_suggestions_are_difflibs(keys: list[str], typed: str) -> None:
    """When nothing matches: the five names difflib.get_close_matches picks, in its order."""
    import difflib

    candidates = [Candidate(f"c{i}", tuple(key.split("/")), "project")
                  for i, key in enumerate(keys)]
    index = target_index(candidates)
    last = {key: c for key, c in zip(index.keys, candidates, strict=True)}
    expected = [last[k] for k in difflib.get_close_matches(typed, list(last), 5, 0.5)]
    assert index.close_matches(typed, 5, 0.5) == expected
