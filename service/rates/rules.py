"""Which billing (or cost) rate applies to a time entry: a pure function of the entry and the
organisation's rates, without the database.

The order of the search (the specification's "Billing rates"):
1. the project side: each project of the entry, deepest first, and for each of them the
   project itself, then its tags (deepest tag first, then the tag's ancestors), then its parent
   project and the parent's tags, up to the top-level project;
2. the person side: the person, then the person's tags (as above);
3. the organisation, the default both sides inherit.
Rates cannot be set on a task: an entry's task plays no part.

At each place the rate whose From date is the latest one on or before the entry's day applies;
a place whose rates all start later is passed over, and so is a tag whose tagging (tagPerson /
tagProject with a start time) starts after the entry's day. A rate split by persons picks the row of
the entry's person, split by projects the row of the deepest of the entry's projects (or their
ancestors) that has one, split by tags the row of the first of the person's tags, then the
projects' tags, that has one; without a matching row the rate's own amount applies.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

METHOD_HOURLY = "hourly"
METHOD_DAILY = "daily"
METHOD_FIXED = "fixed"
METHOD_NON_BILLABLE = "nonBillable"
METHODS = (METHOD_HOURLY, METHOD_DAILY, METHOD_FIXED, METHOD_NON_BILLABLE)
SPLITTABLE_METHODS = (METHOD_HOURLY, METHOD_DAILY)

SPLIT_PERSONS = "persons"
SPLIT_PROJECTS = "projects"
SPLIT_TAGS = "tags"
SPLIT_TYPES = (SPLIT_PERSONS, SPLIT_PROJECTS, SPLIT_TAGS)

ORGANISATIONS = "organisations"
TAGS = "tags"
PROJECTS = "projects"
PERSONS = "persons"

# Which split types each level may use (the specification: by persons on the organisation,
# tags and projects; by projects on persons and tags; by tags wherever the other side has tags).
SPLITS_BY_LEVEL: dict[str, tuple[str, ...]] = {
    ORGANISATIONS: (SPLIT_PERSONS, SPLIT_TAGS),
    TAGS: (SPLIT_PERSONS, SPLIT_PROJECTS),
    PROJECTS: (SPLIT_PERSONS, SPLIT_TAGS),
    PERSONS: (SPLIT_PROJECTS, SPLIT_TAGS),
}


@dataclass(frozen=True)
class SplitRow:
    value: int
    currency: str
    non_billable: bool = False


@dataclass(frozen=True)
class RateFacts:
    id: str
    start_day: date
    method: str
    value: int
    currency: str
    split_type: str | None = None
    splits: Mapping[str, SplitRow] = field(default_factory=dict)
    # A fixed fee is due once, or with a repeat once every `frequency` occurrences (day,
    # week, month, year) from its From date until `repeat_end_day` (None: do not end).
    repeat_enabled: bool = False
    repeat_occurrence: str = "month"
    repeat_frequency: int = 1
    repeat_end_day: date | None = None


@dataclass(frozen=True)
class Place:
    """Where a rate can be set: (collection, id)."""

    collection: str
    id: str


@dataclass(frozen=True)
class RateBook:
    """An organisation's rates of one type and the structure the search walks."""

    organisation_id: str
    rates: Mapping[Place, Sequence[RateFacts]]
    project_parents: Mapping[str, str | None] = field(default_factory=dict)
    tag_parents: Mapping[str, str | None] = field(default_factory=dict)
    # Tags of each project / person, in the order they are tried (deepest first).
    project_tags: Mapping[str, Sequence[str]] = field(default_factory=dict)
    person_tags: Mapping[str, Sequence[str]] = field(default_factory=dict)
    # (project or person id, tag id) -> the first day the tagging applies (tagPerson /
    # tagProject with a startTime); untimed taggings always apply.
    tag_since: Mapping[tuple[str, str], date] = field(default_factory=dict)

    def tags_of(self, owner: Mapping[str, Sequence[str]], owner_id: str,
                day: date | None) -> list[str]:
        """The owner's tags that apply on `day` (all of them when `day` is None)."""
        return [
            t for t in owner.get(owner_id, ())
            if day is None or self.tag_since.get((owner_id, t), day) <= day
        ]


@dataclass(frozen=True)
class Entry:
    day: date
    person_id: str
    project_ids: Sequence[str] = ()


@dataclass(frozen=True)
class Resolution:
    rate: RateFacts
    place: Place
    method: str
    value: int
    currency: str
    non_billable: bool
    # The split row used (its entity id), if any.
    split_entity: str | None = None


def rate_on(rates: Iterable[RateFacts], day: date) -> RateFacts | None:
    """The rate whose From date is the latest on or before `day` (ties: the last given)."""
    best: RateFacts | None = None
    for rate in rates:
        if rate.start_day <= day and (best is None or rate.start_day >= best.start_day):
            best = rate
    return best


def _chain(parents: Mapping[str, str | None], item_id: str) -> list[str]:
    found = [item_id]
    current = parents.get(item_id)
    while current is not None and current not in found:
        found.append(current)
        current = parents.get(current)
    return found


def _depth(parents: Mapping[str, str | None], item_id: str) -> int:
    return len(_chain(parents, item_id)) - 1


def tag_chain(book: RateBook, tag_ids: Iterable[str]) -> list[str]:
    """Each tag, then its ancestors, once each, in order."""
    found: list[str] = []
    for tag_id in tag_ids:
        for item in _chain(book.tag_parents, tag_id):
            if item not in found:
                found.append(item)
    return found


def project_chain(book: RateBook, project_ids: Iterable[str]) -> list[str]:
    """The entry's projects, deepest first, each followed by its ancestors."""
    ordered = sorted(
        dict.fromkeys(project_ids), key=lambda p: -_depth(book.project_parents, p)
    )
    found: list[str] = []
    for project_id in ordered:
        for item in _chain(book.project_parents, project_id):
            if item not in found:
                found.append(item)
    return found


def project_places(
    book: RateBook, project_ids: Iterable[str], day: date | None = None
) -> list[Place]:
    places: list[Place] = []
    for project_id in project_chain(book, project_ids):
        places.append(Place(PROJECTS, project_id))
        places.extend(
            Place(TAGS, t)
            for t in tag_chain(book, book.tags_of(book.project_tags, project_id, day))
        )
    return list(dict.fromkeys(places))


def person_places(book: RateBook, person_id: str, day: date | None = None) -> list[Place]:
    return [
        Place(PERSONS, person_id),
        *(Place(TAGS, t)
          for t in tag_chain(book, book.tags_of(book.person_tags, person_id, day))),
    ]


def search_order(book: RateBook, entry: Entry) -> list[Place]:
    """Every place tried for the entry, in order (project side, person side, organisation)."""
    places = (project_places(book, entry.project_ids, entry.day)
              + person_places(book, entry.person_id, entry.day))
    places.append(Place(ORGANISATIONS, book.organisation_id))
    return list(dict.fromkeys(places))


def _split_keys(book: RateBook, entry: Entry, split_type: str) -> list[str]:
    if split_type == SPLIT_PERSONS:
        return [entry.person_id]
    if split_type == SPLIT_PROJECTS:
        return project_chain(book, entry.project_ids)
    person_tags = tag_chain(book, book.tags_of(book.person_tags, entry.person_id, entry.day))
    project_tags = [
        t for p in project_chain(book, entry.project_ids)
        for t in tag_chain(book, book.tags_of(book.project_tags, p, entry.day))
    ]
    return list(dict.fromkeys(person_tags + project_tags))


def applied(book: RateBook, entry: Entry, rate: RateFacts, place: Place) -> Resolution:
    """The amount of `rate` for the entry, with its split row if one matches."""
    if rate.method == METHOD_NON_BILLABLE:
        return Resolution(rate, place, rate.method, 0, rate.currency, True)
    if rate.split_type is not None and rate.method in SPLITTABLE_METHODS:
        for key in _split_keys(book, entry, rate.split_type):
            row = rate.splits.get(key)
            if row is not None:
                return Resolution(
                    rate, place, rate.method, 0 if row.non_billable else row.value,
                    row.currency, row.non_billable, key,
                )
    return Resolution(rate, place, rate.method, rate.value, rate.currency, False)


def resolve(book: RateBook, entry: Entry) -> Resolution | None:
    """The rate that applies to the entry, or None when no place has one on its day."""
    for place in search_order(book, entry):
        rate = rate_on(book.rates.get(place, ()), entry.day)
        if rate is not None:
            return applied(book, entry, rate, place)
    return None


def inherited(
    book: RateBook, places: Sequence[Place]
) -> tuple[Place | None, Sequence[RateFacts]]:
    """The first place of `places` that has rates, and its rates (the `billings` attribute:
    the entity's own rates, or the ones it inherits)."""
    for place in places:
        rates = book.rates.get(place)
        if rates:
            return place, rates
    return None, ()


def inheritance_places(book: RateBook, place: Place) -> list[Place]:
    """Where an entity's rates come from when it has none of its own."""
    organisation = Place(ORGANISATIONS, book.organisation_id)
    if place.collection == PROJECTS:
        return [*project_places(book, [place.id]), organisation]
    if place.collection == PERSONS:
        return [*person_places(book, place.id), organisation]
    if place.collection == TAGS:
        return [*(Place(TAGS, t) for t in tag_chain(book, [place.id])), organisation]
    return [organisation]
