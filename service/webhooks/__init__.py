"""Integration webhooks: a durable queue of deliveries (`queue`) and the worker that POSTs them
with signatures and retries (`worker`)."""

from typing import TYPE_CHECKING

from service.face import face_attribute

if TYPE_CHECKING:
    from service.webhooks.queue import (
        EVENT_APPROVAL_REMINDER,
        EVENT_APPROVAL_UPDATE,
        EVENT_JOURNAL_MESSAGE,
        EVENT_JOURNAL_MESSAGE_DELETED,
        EVENT_JOURNAL_MESSAGE_EDITED,
        EVENT_SETTINGS_UPDATE,
        EVENT_TIMESHEET_REMINDER,
        KICK,
        Webhook,
        enqueue,
        enqueue_many,
        webhooks_column,
        webhooks_in,
    )

__all__ = [
    "EVENT_APPROVAL_REMINDER",
    "EVENT_APPROVAL_UPDATE",
    "EVENT_JOURNAL_MESSAGE",
    "EVENT_JOURNAL_MESSAGE_DELETED",
    "EVENT_JOURNAL_MESSAGE_EDITED",
    "EVENT_SETTINGS_UPDATE",
    "EVENT_TIMESHEET_REMINDER",
    "KICK",
    "Webhook",
    "enqueue",
    "enqueue_many",
    "webhooks_column",
    "webhooks_in",
]


def __getattr__(name: str) -> object:
    return face_attribute(__name__, name)
