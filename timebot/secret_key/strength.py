"""Is a TIMEBOT_SECRET_KEY strong enough to sign links and reply tokens?

The key signs every one-click link and reply address and encrypts the stored API keys: anyone
who knows it can approve any timesheet as anyone. A key copied from a placeholder (the compose
file's `change-me-to-a-long-random-string`, "secret", "changeme", …) or too short to resist a
guess is refused at start, with the variable named, instead of running with it.

`secret_key_problem(value)` is pure: the reason the value is unusable, or None.
"""

from __future__ import annotations

import re

__all__ = ["MIN_SECRET_BYTES", "secret_key_problem"]

MIN_SECRET_BYTES = 32
MIN_DISTINCT_CHARACTERS = 10

# Fragments of placeholder values found in examples, templates and documentation. Compared
# with the key lower-cased and stripped of everything but letters and digits.
_PLACEHOLDERS = (
    "changeme",
    "changethis",
    "replaceme",
    "replacethis",
    "placeholder",
    "yoursecret",
    "insertsecret",
    "putyour",
    "example",
    "notasecret",
    "longrandomstring",
    "randomstring",
    "secretkey",
)

GENERATE_HINT = (
    "generate one with `python3 -c 'import secrets; print(secrets.token_urlsafe(48))'`, "
    "or leave it unset to use the key generated in the data dir"
)


def secret_key_problem(value: str) -> str | None:
    """Why `value` must not be used as the secret key, or None when it may."""
    size = len(value.encode("utf-8"))
    if size < MIN_SECRET_BYTES:
        return f"is too short ({size} bytes; at least {MIN_SECRET_BYTES} are required)"
    folded = re.sub(r"[^a-z0-9]", "", value.lower())
    for fragment in _PLACEHOLDERS:
        if fragment in folded:
            return f"looks like a placeholder (it contains {fragment!r}), not a secret"
    if len(set(value)) < MIN_DISTINCT_CHARACTERS:
        return f"has only {len(set(value))} distinct characters; a random key has many more"
    return None
