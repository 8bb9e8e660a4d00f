"""Custom fields as one table: every field type (text, number, date, date-time, boolean, URL)
with its options (name, GraphQL argument type, default, check) and how a value of the type
is checked against them.

Everything else follows from the table: the `editCustomField<Type>Option<Name>` mutations
(`service/custom_fields/sdl.py` writes their SDL,
`service/custom_fields/custom_fields_resolvers.py` binds
them), the `<type>Options` attributes of SvcCustomField, the `editCustomFieldValue<Type>`
mutations and the value argument of `addCustomFieldValue`. Adding an option is one row.

Everything here is pure. An option's `check` returns the value to store or raises
`ValueError(problem)` (reported as `BadInput(<the option's argument>, problem)`); after each
edit the options are checked together (`consistent`: min <= max, the default obeys the
others). A value is checked by `check_value`, which raises `OptionBroken(option, problem)`
naming the option the value breaks.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any
from urllib.parse import urlsplit

DAY_MS = 86_400_000
MAX_TEXT = 10_000
MAX_ALLOWED_VALUES = 500
MAX_REGEX = 500


class OptionBroken(ValueError):
    """A value breaks one option of its field."""

    def __init__(self, option: str, problem: str) -> None:
        super().__init__(problem)
        self.option = option
        self.problem = problem


@dataclass(frozen=True)
class Option:
    name: str
    argument: str  # GraphQL type of the mutation's argument (also the attribute's type)
    default: Any
    check: Callable[[Any], Any]
    # Edited by editCustomField<Type>Option<Name>; False: by its own mutations (allowed values).
    edited: bool = True

    @property
    def capitalised(self) -> str:
        return self.name[0].upper() + self.name[1:]


@dataclass(frozen=True)
class FieldType:
    name: str  # fieldType as stored and given ("text", "dateTime" ...)
    mutation_name: str  # in editCustomField<mutation_name>Option<Name>
    value_name: str  # in editCustomFieldValue<value_name>
    value_argument: str  # textValue, numberValue ...
    value_type: str  # GraphQL type of the value
    options_attribute: str  # textOptions ...
    options: tuple[Option, ...]
    value_check: Callable[[Any, Mapping[str, Any]], Any]
    consistency: Callable[[Mapping[str, Any]], None] = lambda _options: None

    def defaults(self) -> dict[str, Any]:
        return {option.name: option.default for option in self.options}

    def option(self, name: str) -> Option:
        return next(option for option in self.options if option.name == name)


# -- option checks (each returns the value to store) ------------------------------------------


def _any(value: Any) -> Any:
    return value


def _length(value: int) -> int:
    if value < 0 or value > MAX_TEXT:
        raise ValueError(f"must be between 0 and {MAX_TEXT}")
    return value


def _max_length(value: int) -> int:
    if value < 1 or value > MAX_TEXT:
        raise ValueError(f"must be between 1 and {MAX_TEXT}")
    return value


def _short_text(value: str | None) -> str | None:
    if value is not None and len(value) > 255:
        raise ValueError("must be at most 255 characters")
    return value


def _finite(value: float | None) -> float | None:
    if value is not None and not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


def _step(value: float | None) -> float | None:
    if value is not None and (not math.isfinite(value) or value <= 0):
        raise ValueError("must be a positive number")
    return value


def _places(value: int) -> int:
    if value < 0 or value > 10:
        raise ValueError("must be between 0 and 10")
    return value


def _day(value: float | None) -> float | None:
    if value is not None and (not math.isfinite(value) or value % DAY_MS):
        raise ValueError("must be the start of a day (a multiple of 86400000 ms)")
    return value


def _url(value: str | None) -> str | None:
    if value is not None:
        check_url(value)
    return value


def _nested_repeat(items: Any, inside: bool) -> bool:
    """Whether a parsed pattern repeats something that itself repeats or alternates (the
    shapes whose matching can take exponential time)."""
    for op, arg in items:
        if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
            body = arg[2]
            if inside and arg[1] > 1:
                return True
            if _nested_repeat(body, inside or arg[1] > 1):
                return True
        elif op == sre_constants.SUBPATTERN:
            if _nested_repeat(arg[3], inside):
                return True
        elif op == sre_constants.BRANCH:
            if inside:
                return True
            if any(_nested_repeat(branch, inside) for branch in arg[1]):
                return True
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            if _nested_repeat(arg[1], inside):
                return True
        elif op == sre_constants.GROUPREF:
            raise ValueError("may not refer back to a group")
    return False


def _regex(value: str | None) -> str | None:
    if value is None or value == "":
        return None
    if len(value) > MAX_REGEX:
        raise ValueError(f"must be at most {MAX_REGEX} characters")
    try:
        parsed = sre_parse.parse(value)
        re.compile(value)
    except (re.error, RecursionError, OverflowError) as exc:
        raise ValueError(f"is not a regular expression ({exc})") from None
    if _nested_repeat(parsed, False):
        raise ValueError("may not repeat a group that itself repeats or has alternatives")
    return value


def check_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc or len(value) > 2048:
        raise ValueError("must be an http or https URL")
    return value


# -- option sets checked together ----------------------------------------------------------


def _ordered(low: str, high: str) -> Callable[[Mapping[str, Any]], None]:
    def check(options: Mapping[str, Any]) -> None:
        if options.get(low) is not None and options.get(high) is not None \
                and options[low] > options[high]:
            raise OptionBroken(high, f"{high} must not be below {low}")
    return check


def _text_consistency(options: Mapping[str, Any]) -> None:
    _ordered("minLength", "maxLength")(options)
    if options.get("defaultValue") is not None:
        check_text(options["defaultValue"], options, default=True)


def _number_consistency(options: Mapping[str, Any]) -> None:
    _ordered("min", "max")(options)
    if options.get("defaultValue") is not None:
        check_number(options["defaultValue"], options)


def _moment_consistency(low: str, high: str, default: str, check: Callable[..., Any]
                        ) -> Callable[[Mapping[str, Any]], None]:
    def consistency(options: Mapping[str, Any]) -> None:
        _ordered(low, high)(options)
        if options.get(default) is not None:
            check(options[default], options)
    return consistency


# -- value checks (pure: raise OptionBroken naming the option) -------------------------------


def check_text(value: str, options: Mapping[str, Any], default: bool = False) -> str:
    if len(value) > int(options.get("maxLength") or MAX_TEXT):
        raise OptionBroken("maxLength", f"is longer than {options['maxLength']} characters")
    if len(value) < int(options.get("minLength") or 0):
        raise OptionBroken("minLength", f"is shorter than {options['minLength']} characters")
    if options.get("useAllowedValues") and not default \
            and value not in (options.get("allowedValues") or []):
        raise OptionBroken("allowedValues", "is not one of the allowed values")
    pattern = options.get("validationRegex")
    if pattern and re.fullmatch(pattern, value) is None:
        raise OptionBroken("validationRegex", f"does not match {pattern!r}")
    return value


def _decimals(value: float) -> int:
    text = repr(float(value))
    if "e" in text or "E" in text:
        return 0 if value == int(value) else 99
    return len(text.split(".")[1].rstrip("0")) if "." in text else 0


def check_number(value: float, options: Mapping[str, Any]) -> float:
    if not math.isfinite(value):
        raise OptionBroken("decimal", "is not a finite number")
    if options.get("min") is not None and value < options["min"]:
        raise OptionBroken("min", f"is below the minimum {options['min']:g}")
    if options.get("max") is not None and value > options["max"]:
        raise OptionBroken("max", f"is above the maximum {options['max']:g}")
    if not options.get("decimal") and value != int(value):
        raise OptionBroken("decimal", "must be a whole number")
    places = int(options.get("decimalPlaces") or 0)
    if options.get("decimal") and _decimals(value) > places:
        raise OptionBroken("decimalPlaces", f"has more than {places} decimal places")
    step = options.get("step")
    if step:
        base = options.get("min") or 0.0
        steps = (value - base) / step
        if abs(steps - round(steps)) > 1e-9 * max(1.0, abs(steps)):
            raise OptionBroken("step", f"is not a multiple of the step {step:g} from {base:g}")
    return value


def _moment_check(low: str, high: str, day: bool) -> Callable[[float, Mapping[str, Any]], float]:
    def check(value: float, options: Mapping[str, Any]) -> float:
        if not math.isfinite(value) or (day and value % DAY_MS):
            raise ValueError("must be the start of a day (a multiple of 86400000 ms)" if day
                             else "must be a time in ms")
        if options.get(low) is not None and value < options[low]:
            raise OptionBroken(low, f"is before the {low} {options[low]:.0f}")
        if options.get(high) is not None and value > options[high]:
            raise OptionBroken(high, f"is after the {high} {options[high]:.0f}")
        return value
    return check


def _url_value(value: str, _options: Mapping[str, Any]) -> str:
    return check_url(value)


def _boolean_value(value: bool, _options: Mapping[str, Any]) -> bool:
    return value


TYPES: tuple[FieldType, ...] = (
    FieldType("text", "Text", "Text", "textValue", "String", "textOptions", (
        Option("maxLength", "Int!", 255, _max_length),
        Option("minLength", "Int!", 0, _length),
        Option("validationRegex", "String", None, _regex),
        Option("placeholder", "String!", "", _short_text),
        Option("defaultValue", "String", None, _any),
        Option("allowedValues", "[String]!", [], _any, edited=False),
        Option("useAllowedValues", "Boolean!", False, _any),
    ), check_text, _text_consistency),
    FieldType("number", "Number", "Number", "numberValue", "Float", "numberOptions", (
        Option("min", "Float", None, _finite),
        Option("max", "Float", None, _finite),
        Option("step", "Float", None, _step),
        Option("decimal", "Boolean!", True, _any),
        Option("decimalPlaces", "Int!", 2, _places),
        Option("prefix", "String!", "", _short_text),
        Option("suffix", "String!", "", _short_text),
        Option("defaultValue", "Float", None, _finite),
    ), check_number, _number_consistency),
    FieldType("date", "Date", "Date", "dateValue", "Float", "dateOptions", (
        Option("minDate", "Float", None, _day),
        Option("maxDate", "Float", None, _day),
        Option("defaultDate", "Float", None, _day),
    ), _moment_check("minDate", "maxDate", True),
        _moment_consistency("minDate", "maxDate", "defaultDate",
                            _moment_check("minDate", "maxDate", True))),
    FieldType("datetime", "Datetime", "DateTime", "dateTimeValue", "Float", "datetimeOptions", (
        Option("minDatetime", "Float", None, _finite),
        Option("maxDatetime", "Float", None, _finite),
        Option("defaultDatetime", "Float", None, _finite),
    ), _moment_check("minDatetime", "maxDatetime", False),
        _moment_consistency("minDatetime", "maxDatetime", "defaultDatetime",
                            _moment_check("minDatetime", "maxDatetime", False))),
    FieldType("boolean", "Boolean", "Boolean", "booleanValue", "Boolean", "booleanOptions", (
        Option("defaultValue", "Boolean", None, _any),
        Option("trueLabel", "String", None, _short_text),
        Option("falseLabel", "String", None, _short_text),
    ), _boolean_value),
    FieldType("url", "Url", "Url", "urlValue", "String", "urlOptions", (
        Option("placeholder", "String!", "", _short_text),
        Option("defaultValue", "String", None, _url),
    ), _url_value),
)
BY_NAME: dict[str, FieldType] = {field_type.name: field_type for field_type in TYPES}
# The value arguments of addCustomFieldValue, in the schema's order.
VALUE_ARGUMENTS = tuple(field_type.value_argument for field_type in TYPES)


def field_type(name: str) -> FieldType:
    """The type named `name` (ValueError listing the types otherwise)."""
    found = BY_NAME.get(name)
    if found is None:
        raise ValueError(f"must be one of {', '.join(BY_NAME)}")
    return found


def options_of(kind: FieldType, stored: Mapping[str, Any] | None) -> dict[str, Any]:
    """The field's options: the stored ones over the type's defaults."""
    return {**kind.defaults(), **{k: v for k, v in (stored or {}).items()
                                  if k in kind.defaults()}}


def edit_option(kind: FieldType, stored: Mapping[str, Any] | None, name: str, value: Any
                ) -> dict[str, Any]:
    """The options after setting `name` (ValueError: the value; OptionBroken: the set)."""
    options = options_of(kind, stored)
    options[name] = kind.option(name).check(value)
    kind.consistency(options)
    return options


def edit_allowed_values(kind: FieldType, stored: Mapping[str, Any] | None, value: str,
                        add: bool) -> dict[str, Any]:
    options = options_of(kind, stored)
    values = list(options["allowedValues"])
    if add:
        if len(value) > 255 or not value.strip():
            raise ValueError("must be 1 to 255 characters")
        if value in values:
            raise ValueError(f"{value!r} is already an allowed value")
        if len(values) >= MAX_ALLOWED_VALUES:
            raise ValueError(f"a field has at most {MAX_ALLOWED_VALUES} allowed values")
        values.append(value)
    else:
        if value not in values:
            raise ValueError(f"{value!r} is not an allowed value")
        values.remove(value)
    options["allowedValues"] = values
    return options


def check_value(kind: FieldType, options: Mapping[str, Any], value: Any) -> Any:
    """The value to store (None clears it); OptionBroken names the option it breaks,
    ValueError says what else is wrong with it."""
    if value is None:
        return None
    return kind.value_check(value, options_of(kind, options))
