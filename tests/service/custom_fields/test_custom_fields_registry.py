"""The custom-field registry's pure rules without a server: the regular-expression guard, the
number checks at their edges and the visibility rule."""

from __future__ import annotations

import pytest

from service.custom_fields.registry import (
    BY_NAME,
    OptionBroken,
    check_value,
    edit_allowed_values,
    edit_option,
)
from service.custom_fields.visibility_rules import Target, edit_category, initial, shows_on, switch

TEXT, NUMBER = BY_NAME["text"], BY_NAME["number"]


@pytest.mark.parametrize("pattern", [
    "(a+)+$", "(a|a)*b", r"(\w+\s?)*$", "(x*)*", r"(a)\1", "((ab)*c)+", "(?:a{2,})+", "[",
    "a" * 501,
])
def test_patterns_that_could_take_exponential_time_are_refused(pattern: str) -> None:
    with pytest.raises(ValueError):
        edit_option(TEXT, {}, "validationRegex", pattern)


@pytest.mark.parametrize("pattern", [
    "[A-Z]{2}-[0-9]+", "^(foo|bar)$", r"\d{4}-\d{2}", "(?i)cc-[0-9]{3}", "a?b*c+",
])
def test_ordinary_patterns_are_taken(pattern: str) -> None:
    assert edit_option(TEXT, {}, "validationRegex", pattern)["validationRegex"] == pattern


def test_numbers_at_their_edges() -> None:
    options = {"min": 0.0, "step": 0.1, "decimalPlaces": 1}
    assert check_value(NUMBER, options, 0.3) == 0.3  # 3 steps, whatever the float error
    with pytest.raises(OptionBroken) as broken:
        check_value(NUMBER, options, 1e-7)
    assert broken.value.option == "decimalPlaces"
    with pytest.raises(OptionBroken) as broken:
        check_value(NUMBER, {"decimal": False}, 2.5)
    assert broken.value.option == "decimal"
    with pytest.raises(OptionBroken) as broken:
        edit_option(NUMBER, {"max": 1.0}, "min", 2.0)
    assert broken.value.option == "max"
    assert check_value(NUMBER, {}, None) is None


def test_allowed_values_and_lengths() -> None:
    options = edit_allowed_values(TEXT, {"useAllowedValues": True}, "A-1", add=True)
    assert check_value(TEXT, options, "A-1") == "A-1"
    with pytest.raises(OptionBroken) as broken:
        check_value(TEXT, options, "A-2")
    assert broken.value.option == "allowedValues"
    with pytest.raises(ValueError):
        edit_option(TEXT, {}, "maxLength", 0)
    with pytest.raises(OptionBroken):
        edit_option(TEXT, {"maxLength": 5}, "minLength", 6)


def test_visibility_rule() -> None:
    assert shows_on(None, Target("timeRecord")) and not shows_on(None, Target("person"))
    assert shows_on(None, Target("tag"))
    assert not shows_on(None, Target("timeRecord", absence=True))
    projects = edit_category(switch(None, "projects", True), "projects", "c1", [1], "add")
    assert shows_on(projects, Target("project", frozenset({"c1"}), 1))
    assert not shows_on(projects, Target("project", frozenset({"c1"}), 0))
    assert not shows_on(projects, Target("project", frozenset({"c2"}), 1))
    restricted = {**initial(), "timeRecords": {"projectCategories": ["c1"],
                                               "taskCategories": None, "absences": False}}
    assert not shows_on(restricted, Target("timeRecord", frozenset({"c2"})))
    assert shows_on(restricted, Target("timeRecord", frozenset({"c2"}), assigned=True))
    assert not shows_on(switch(None, "timeRecords", False), Target("timeRecord"))
