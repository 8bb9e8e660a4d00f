"""The bot's own state (people directory, inbox, outbox, chat messages), in its own database,
and the workers that drain its durable tables (`worker`, `draining`)."""
