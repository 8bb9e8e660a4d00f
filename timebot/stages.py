"""How a person reads an approval stage: "stage 1 of 2", counted from 1.

The service numbers stages from 0 (`stage`, `currentStage`); every text a person reads — the
review and reminder e-mails, receipts, the owner's notices, Slack — converts here, once.
"""

from __future__ import annotations

from timebot import l10n

__all__ = ["STAGE_TYPES", "stage_label", "stage_number"]

def _(message: str) -> str:  # marks a text for the catalogs; translated where it is used
    return message


STAGE_TYPES = {
    "person": _("Specific people"),
    "tag": _("Tagged people"),
    "pm": _("Project managers"),
    "tm": _("Task managers"),
    "ppm": _("People managers"),
    "admin": _("Admins"),
}


def stage_number(stage: int) -> int:
    """The service's 0-based stage as people count it (from 1)."""
    return stage + 1


def stage_label(stage: int, count: int, stage_type: str | None = None) -> str:
    """`stage 1 of 2` (with the stage's kind: `stage 1 of 2 (People managers)`)."""
    known = STAGE_TYPES.get(stage_type or "")
    label = l10n._(known) if known else stage_type or ""
    text = l10n._("stage {number} of {count}").format(
        number=stage_number(stage), count=max(count, stage_number(stage), 1))
    return text + (f" ({label})" if label else "")
