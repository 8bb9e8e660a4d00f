"""`timebot templates …`: the e-mail templates an administrator sets (`emailTemplates`)."""

from __future__ import annotations

from typing import TextIO

import click

from plumbing.mail_template_kinds import KINDS, SAMPLES


@click.group()
def templates() -> None:
    """E-mail templates: the kinds, and a preview with sample values."""


@templates.command("kinds")
def templates_kinds() -> None:
    """Each kind and the values its template may read."""
    for kind in KINDS:
        click.echo(f"{kind}: {', '.join(sorted(SAMPLES[kind]))}")


@templates.command("preview")
@click.argument("kind", type=click.Choice(KINDS))
@click.argument("template", type=click.File("r"), default="-")
def templates_preview(kind: str, template: TextIO) -> None:
    """Render TEMPLATE (a file, or - for standard input) as a mail of KIND with sample
    values, in the sandbox the mails are rendered in; a template that does not render is
    named with its line (and the service refuses to save it)."""
    from plumbing.mail_templates import TemplateProblem, preview

    try:
        click.echo(preview(kind, template.read()), nl=False)
    except TemplateProblem as problem:
        raise click.ClickException(f"the template does not render: {problem}") from None
