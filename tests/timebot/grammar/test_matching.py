"""match_target and match_absence: unique prefix, then fuzzy; case- and accent-blind."""

from __future__ import annotations

import pytest

from timebot.grammar import (
    AbsenceType,
    Ambiguous,
    Candidate,
    Match,
    NoMatch,
    match_absence,
    match_target,
)
from timebot.grammar.matching import edit_distance, fold

ACME = Candidate("p1", ("Acme",), "project")
ACME_CORP = Candidate("p2", ("Acme Corp",), "project")
CAFE = Candidate("p3", ("Café Müller",), "project")
GLOBEX = Candidate("p4", ("Globex",), "project")
WEBSITE = Candidate("t1", ("Acme", "Website"), "task")
WEBSHOP = Candidate("t2", ("Acme", "Webshop"), "task")
DESIGN = Candidate("t3", ("Acme", "Website", "Design"), "task")
GLOBEX_WEBSITE = Candidate("t4", ("Globex", "Website"), "task")
CANDIDATES = [ACME, ACME_CORP, CAFE, GLOBEX, WEBSITE, WEBSHOP, DESIGN, GLOBEX_WEBSITE]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (["acme"], Match(ACME, "exact")),
        (["ACME"], Match(ACME, "exact")),
        (["acmecorp"], Match(ACME_CORP, "exact")),
        (["acme-corp"], Match(ACME_CORP, "exact")),
        (["Acme Corp"], Match(ACME_CORP, "exact")),
        (["acm"], Ambiguous((ACME, ACME_CORP))),
        (["acme c"], Match(ACME_CORP, "prefix")),
        (["cafe"], Match(CAFE, "prefix")),
        (["CAFÉ"], Match(CAFE, "prefix")),
        (["cafe muller"], Match(CAFE, "exact")),
        (["glo"], Match(GLOBEX, "prefix")),
        (["glbex"], Match(GLOBEX, "fuzzy")),
        (["gloebx"], Match(GLOBEX, "fuzzy")),
        (["acme", "web"], Ambiguous((WEBSHOP, WEBSITE))),
        (["acme", "websit"], Match(WEBSITE, "prefix")),
        (["acme", "webiste"], Match(WEBSITE, "fuzzy")),
        (["a", "websh"], Match(WEBSHOP, "prefix")),
        (["glob", "w"], Match(GLOBEX_WEBSITE, "prefix")),
        (["acme", "website", "design"], Match(DESIGN, "exact")),
        (["acme", "website", "des"], Match(DESIGN, "prefix")),
        # no candidate with as many segments: the last segments of longer paths
        (["website"], Ambiguous((WEBSITE, GLOBEX_WEBSITE))),
        (["design"], Match(DESIGN, "exact")),
        (["website", "design"], Match(DESIGN, "exact")),
        (["webshop"], Match(WEBSHOP, "exact")),
        # too short to forgive a typo
        (["ab"], NoMatch()),
        (["zzzz"], NoMatch()),
        ([], NoMatch()),
        (["---"], NoMatch()),
    ],
)
def test_match_target(path: list[str], expected: object) -> None:
    assert match_target(path, CANDIDATES) == expected


def test_an_exact_name_wins_over_a_longer_one_it_is_the_prefix_of() -> None:
    assert match_target(["acme"], [ACME_CORP, ACME]) == Match(ACME, "exact")
    assert match_target(["acme"], [ACME_CORP]) == Match(ACME_CORP, "prefix")


def test_the_same_name_twice_is_ambiguous() -> None:
    twin = Candidate("p9", ("ACME",), "project")
    assert match_target(["acme"], [ACME, twin]) == Ambiguous((ACME, twin))


def test_no_match_suggests_close_names() -> None:
    # the tasks of the project that was recognised, closest first
    assert match_target(["acme", "shopping"], CANDIDATES) == NoMatch((WEBSHOP, WEBSITE))
    assert match_target(["globex", "xyz"], CANDIDATES) == NoMatch((GLOBEX_WEBSITE,))
    # otherwise names like the one typed
    assert match_target(["globexx", "x"], CANDIDATES) == NoMatch((GLOBEX_WEBSITE,))
    assert match_target(["acme"], []) == NoMatch()
    assert match_absence(["holiday", "vacationish"], TYPES) == NoMatch((VACATION,))


VACATION = AbsenceType("a1", "Vacation")
SICK_LEAVE = AbsenceType("a2", "Sick leave")
SICK_CHILD = AbsenceType("a3", "Sick child")
PARENTAL = AbsenceType("a4", "Parental leave")
TYPES = [VACATION, SICK_LEAVE, SICK_CHILD, PARENTAL]


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["vacation"], Match(VACATION, "exact")),
        (["VACATION"], Match(VACATION, "exact")),
        (["vac"], Match(VACATION, "prefix")),
        (["vacation", "family", "trip"], Match(VACATION, "exact", ("family", "trip"))),
        (["vacaton"], Match(VACATION, "fuzzy")),
        (["vacaton", "trip"], Match(VACATION, "fuzzy", ("trip",))),
        (["sick"], Ambiguous((SICK_CHILD, SICK_LEAVE))),
        (["sick", "flu"], Ambiguous((SICK_CHILD, SICK_LEAVE))),
        (["sick", "leave"], Match(SICK_LEAVE, "exact")),
        (["Sick", "Leave", "flu"], Match(SICK_LEAVE, "exact", ("flu",))),
        (["sick", "ch"], Match(SICK_CHILD, "prefix")),
        (["sickleave"], Match(SICK_LEAVE, "exact")),
        (["parental"], Match(PARENTAL, "prefix")),
        (["urlaub"], NoMatch()),
        ([], NoMatch()),
    ],
)
def test_match_absence(words: list[str], expected: object) -> None:
    assert match_absence(words, TYPES) == expected


def test_accents_and_case_do_not_matter() -> None:
    conge = AbsenceType("a5", "Congé payé")
    assert match_absence(["conge", "paye"], [conge]) == Match(conge, "exact")
    assert match_absence(["CONGÉ"], [conge]) == Match(conge, "prefix")
    assert fold("Café-Bar 2") == "cafebar2"


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [
        ("", "", 0),
        ("abc", "abc", 0),
        ("abc", "acb", 1),
        ("abc", "ab", 1),
        ("", "abc", 3),
        ("kitten", "sitting", 3),
        ("webiste", "website", 1),
    ],
)
def test_edit_distance(a: str, b: str, distance: int) -> None:
    assert edit_distance(a, b) == distance
    assert edit_distance(b, a) == distance
