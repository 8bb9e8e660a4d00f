"""What a person has read of their notifications (getNotificationHistory): one row per item
marked read, and one row with item `*` whose time marks everything before it read
(markAllNotificationsRead)."""

from __future__ import annotations

from sqlalchemy import BigInteger, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from service.model_base import Base, OrgScoped, id_column

ALL_READ = "*"


class NotificationRead(OrgScoped, Base):
    __tablename__ = "notification_reads"
    __table_args__ = (UniqueConstraint("person_id", "item_id", name="uq_notification_reads"),)

    id: Mapped[str] = id_column()
    person_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("persons.id", ondelete="CASCADE"), index=True
    )
    item_id: Mapped[str] = mapped_column(String(24))
    read_ms: Mapped[int] = mapped_column(BigInteger)
