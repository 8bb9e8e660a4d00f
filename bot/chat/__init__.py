"""The chat front's platform-neutral core (what a chat does, written once)."""
