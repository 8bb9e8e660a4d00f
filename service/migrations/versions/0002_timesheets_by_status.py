"""the submitted timesheets by period: an organisation's, read a page at a time in period order
(getPendingApprovals(showAll)), without reading its whole history. Partial (status 's', a
literal in the query that uses it): other queries' plans do not take it for selective

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-27 12:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("timesheets", schema=None) as batch_op:
        batch_op.create_index("ix_timesheets_submitted_period",
                              ["organisation_id", "start_ms", "id"], unique=False,
                              sqlite_where=sa.text("status = 's'"),
                              postgresql_where=sa.text("status = 's'"))


def downgrade() -> None:
    with op.batch_alter_table("timesheets", schema=None) as batch_op:
        batch_op.drop_index("ix_timesheets_submitted_period")
