"""The mail front's durable queues: the inbox that every way in (SMTP, LMTP, IMAP, the outbox
page) ends in, and the outbox with the worker that delivers it. Built by the shell, handed to
mail's parts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mail.queues.inbox import Inbox
from mail.queues.outbox import Outbox, OutboxWorker


@dataclass
class MailParts:
    inbox: Inbox
    outbox: Outbox
    outbox_worker: OutboxWorker
    # Wakes the inbox workers when something put a message in the inbox (set by the inbound
    # component when it is installed).
    wake_inbox: Callable[[], None] = lambda: None

