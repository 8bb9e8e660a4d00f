"""Events from the service: received (webhooks, or made from what waits when none came),
stored once per delivery and dispatched to every subscriber."""
