"""A signed, expiring `state` for a browser's round trip through another site (an OAuth or
admin-consent redirect): it carries a few strings there and back, and only a state this
TIMEBOT_SECRET_KEY issued for this purpose, and not expired, is read back. Nothing is stored:
it is not single-use (what it names is checked again on its return).

Wire format: `<body>.<signature>`; the body is the JSON object of the fields and `e` (the
expiry, Unix seconds), base64url without padding; the signature is its HMAC-SHA256, in hex,
under SHA-256(`timebot-<purpose>:` + the secret key)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

EXPIRY = "e"


class SignedState:
    def __init__(self, secret_key: str, purpose: str, seconds: int) -> None:
        self.key = hashlib.sha256(f"timebot-{purpose}:".encode() + secret_key.encode()).digest()
        self.seconds = seconds

    def issue(self, fields: dict[str, str], now_s: float) -> str:
        """A state carrying `fields` (short keys: it travels in a URL), good for `seconds`."""
        if EXPIRY in fields:
            raise ValueError(f"{EXPIRY!r} is the state's expiry, not a field")
        body = base64.urlsafe_b64encode(json.dumps(
            {**fields, EXPIRY: int(now_s) + self.seconds},
            separators=(",", ":")).encode()).decode().rstrip("=")
        return body + "." + self._sign(body)

    def _sign(self, body: str) -> str:
        return hmac.new(self.key, body.encode(), hashlib.sha256).hexdigest()

    def read(self, state: str, now_s: float) -> dict[str, Any] | None:
        """The fields of a state issued here for this purpose and not expired, else None."""
        body, _dot, signature = state.partition(".")
        if not hmac.compare_digest(self._sign(body).encode(),
                                   signature.encode("utf-8", "replace")):
            return None
        try:
            padded = body + "=" * (-len(body) % 4)
            data: Any = json.loads(base64.urlsafe_b64decode(padded))
        except (ValueError, UnicodeDecodeError):
            return None
        if not isinstance(data, dict) or not isinstance(data.get(EXPIRY), int) \
                or data[EXPIRY] < now_s:
            return None
        return {name: value for name, value in data.items() if name != EXPIRY}
