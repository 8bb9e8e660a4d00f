"""The chat front, whatever the platform: the Slack adapter is bot.slack."""
