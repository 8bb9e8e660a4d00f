"""E-mail templates an administrator writes (the `emailTemplates` settings): the nine kinds,
the values each kind's mail gives its template, and the one sandbox they are checked and
rendered in. The service checks a template with it when it is saved; timebot's mail renders
with it (both stand on this module, so they agree on what a template may read).

A template is text: an optional first line `Subject: …`, then the body (the text part; the
HTML part is the same text, escaped). It is rendered in Jinja's `SandboxedEnvironment` with
no globals, undefined names refused (`StrictUndefined`), `*` and `**` bounded and the output
capped: it reads the values of its mail and nothing else (`{{ ''.__class__ }}` and the like
raise `SecurityError`, reported as a `TemplateProblem`).
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jinja2 import StrictUndefined, TemplateError, TemplateSyntaxError
from jinja2.sandbox import SandboxedEnvironment

from plumbing.mail_template_kinds import KINDS as KINDS
from plumbing.mail_template_kinds import SAMPLES as SAMPLES

MAX_SOURCE = 20_000
MAX_OUTPUT = 100_000
MAX_REPEAT = 10_000



class TemplateProblem(Exception):
    """A template that does not parse or render: what is wrong and on which line (if known)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.message = message
        self.line = line
        super().__init__(f"line {line}: {message}" if line else message)


@dataclass(frozen=True)
class RenderedTemplate:
    subject: str | None  # None: the template has no Subject line (the built-in one applies)
    text: str


def _bounded_mul(left: Any, right: Any) -> Any:
    for value, times in ((left, right), (right, left)):
        if isinstance(value, str | list | tuple) and isinstance(times, int):
            if len(value) * times > MAX_REPEAT:
                raise TemplateProblem("a repetition longer than the mail allows")
    return operator.mul(left, right)


class _Sandbox(SandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**"})

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        # Values, not methods: a template has the filters for what it needs.
        return not callable(value) and super().is_safe_attribute(obj, attr, value)

    def wrap_str_format(self, value: Any) -> None:
        return None  # str.format is a method too: refused like the others

    def call_binop(self, context: Any, operator_: str, left: Any, right: Any) -> Any:
        if operator_ == "**":
            raise TemplateProblem("the power operator is not allowed in a mail template")
        if operator_ == "*":
            return _bounded_mul(left, right)
        return super().call_binop(context, operator_, left, right)


def _environment() -> SandboxedEnvironment:
    environment = _Sandbox(undefined=StrictUndefined, autoescape=False, cache_size=0)
    environment.globals.clear()  # no range, lipsum, cycler, namespace …: the values only
    return environment


_ENVIRONMENT = _environment()


def _split(source: str) -> tuple[str | None, str, int]:
    """(subject source, body source, the body's first line number)."""
    first, _, rest = source.partition("\n")
    if first.lower().startswith("subject:"):
        return first[len("subject:"):].strip(), rest.lstrip("\n"), 2 + (
            len(rest) - len(rest.lstrip("\n")))
    return None, source, 1


def check_syntax(source: str) -> None:
    """Raise TemplateProblem (with the line) when the template does not parse."""
    if len(source) > MAX_SOURCE:
        raise TemplateProblem(f"a template is at most {MAX_SOURCE} characters")
    try:
        _ENVIRONMENT.parse(source)
    except TemplateSyntaxError as error:
        raise TemplateProblem(error.message or "syntax error", error.lineno) from None


def render(source: str, values: Mapping[str, Any]) -> RenderedTemplate:
    """The template rendered with the mail's values (TemplateProblem when it cannot be)."""
    check_syntax(source)
    subject, body, offset = _split(source)
    try:
        text = _ENVIRONMENT.from_string(body).render(dict(values))
        title = (" ".join(_ENVIRONMENT.from_string(subject).render(dict(values)).split())
                 if subject is not None else None)
    except TemplateProblem:
        raise
    except TemplateSyntaxError as error:
        raise TemplateProblem(error.message or "syntax error", error.lineno) from None
    except (TemplateError, ArithmeticError, TypeError, ValueError, AttributeError,
            LookupError, RecursionError) as error:
        raise TemplateProblem(f"{type(error).__name__}: {error}", _line(error, offset)) from None
    if len(text) > MAX_OUTPUT:
        raise TemplateProblem(f"the mail would be longer than {MAX_OUTPUT} characters")
    return RenderedTemplate(title or None, text.strip() + "\n")


def _line(error: BaseException, offset: int) -> int | None:
    """The template line of a render-time error, from the traceback of the compiled code."""
    traceback = error.__traceback__
    line = None
    while traceback is not None:
        if traceback.tb_frame.f_code.co_filename == "<template>":
            line = traceback.tb_lineno
        traceback = traceback.tb_next
    return None if line is None else line + offset - 1


def check(kind: str, source: str) -> None:
    """A template of that kind parses and renders with its sample values (TemplateProblem)."""
    render(source, SAMPLES[kind])


def preview(kind: str, source: str) -> str:
    """The template rendered with its kind's sample values, as an admin would read it."""
    rendered = render(source, SAMPLES[kind])
    return f"Subject: {rendered.subject or '(the built-in subject)'}\n\n{rendered.text}"
