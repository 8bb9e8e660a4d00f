"""The Slack app."""
