"""Encryption of stored secrets (people's API keys) with a key derived from TIMEBOT_SECRET_KEY."""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken

from timebot.errors import ConfigError


class SecretBox:
    """Fernet (AES-128-CBC + HMAC-SHA256) under a key derived per purpose from the secret key."""

    def __init__(self, secret_key: str, purpose: str = "stored-api-keys") -> None:
        digest = hashlib.sha256(f"timebot:{purpose}:{secret_key}".encode()).digest()
        self._fernet = Fernet(base64.urlsafe_b64encode(digest))

    def seal(self, plaintext: str) -> str:
        return self._fernet.encrypt(plaintext.encode()).decode("ascii")

    def open(self, sealed: str) -> str:
        try:
            return self._fernet.decrypt(sealed.encode("ascii")).decode()
        except InvalidToken as error:
            raise ConfigError(
                "a stored key cannot be decrypted: TIMEBOT_SECRET_KEY changed since it was stored"
            ) from error
