"""timesheets by status and period: the organisation's submitted timesheets, read a page at a
time in period order (getPendingApprovals(showAll), the reminders), without reading its whole
history

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-27 12:30:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("timesheets", schema=None) as batch_op:
        batch_op.create_index("ix_timesheets_status_period",
                              ["organisation_id", "status", "start_ms", "id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("timesheets", schema=None) as batch_op:
        batch_op.drop_index("ix_timesheets_status_period")
