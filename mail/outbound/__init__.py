"""The mail timebot writes: review requests, reminders, digests, climbing reminders, owner
notices, due reports, receipts, their templates; and GET /outbox."""
