"""The bot's own state (people directory, inbox, outbox, chat messages), in its own database."""
