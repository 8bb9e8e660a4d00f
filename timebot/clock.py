"""The shell's notion of now: the one clock the bot, the mail front and the embedded service
share, so that a test can freeze or advance all of them at once."""

from __future__ import annotations

from service.clock import SYSTEM_CLOCK, Clock

__all__ = ["SYSTEM_CLOCK", "Clock"]
