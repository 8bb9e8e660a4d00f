"""How a person reads an approval stage: "stage 1 of 2", counted from 1.

The service numbers stages from 0 (`stage`, `currentStage`); every text a person reads — the
review and reminder e-mails, receipts, the owner's notices, Slack — converts here, once.
"""

from __future__ import annotations

__all__ = ["STAGE_TYPES", "stage_label", "stage_number"]

STAGE_TYPES = {
    "person": "Specific people",
    "tag": "Tagged people",
    "pm": "Project managers",
    "tm": "Task managers",
    "ppm": "People managers",
    "admin": "Admins",
}


def stage_number(stage: int) -> int:
    """The service's 0-based stage as people count it (from 1)."""
    return stage + 1


def stage_label(stage: int, count: int, stage_type: str | None = None) -> str:
    """`stage 1 of 2` (with the stage's kind: `stage 1 of 2 (People managers)`)."""
    label = STAGE_TYPES.get(stage_type or "", stage_type or "")
    text = f"stage {stage_number(stage)} of {max(count, stage_number(stage), 1)}"
    return text + (f" ({label})" if label else "")
