"""The deployment's public identity providers (sign in with Google, with Microsoft): OpenID
Connect clients registered once for the whole deployment, configured by
TIMEBOT_GOOGLE_CLIENT_ID / _SECRET (/ _ISSUER) and TIMEBOT_MICROSOFT_CLIENT_ID / _SECRET /
_TENANT (/ _ISSUER). A provider without a client id is off."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from timebot.errors import ConfigError

GOOGLE_ISSUER = "https://accounts.google.com"
MICROSOFT_ISSUER = "https://login.microsoftonline.com/{tenant}/v2.0"
MICROSOFT_TENANT = "common"


@dataclass(frozen=True)
class PublicProvider:
    name: str  # "google" or "microsoft": the path segment and the organisation's settings key
    label: str  # shown on the sign-in button
    issuer: str
    client_id: str
    client_secret: str


def load_identity_providers(get: Callable[[str], str | None]) -> tuple[PublicProvider, ...]:
    providers: list[PublicProvider] = []
    tenant = (get("TIMEBOT_MICROSOFT_TENANT") or MICROSOFT_TENANT).strip()
    for name, label, default_issuer in (
        ("google", "Google", GOOGLE_ISSUER),
        ("microsoft", "Microsoft", MICROSOFT_ISSUER.format(tenant=tenant)),
    ):
        prefix = f"TIMEBOT_{name.upper()}"
        client_id = (get(f"{prefix}_CLIENT_ID") or "").strip()
        secret = (get(f"{prefix}_CLIENT_SECRET") or "").strip()
        if not client_id:
            if secret:
                raise ConfigError(f"{prefix}_CLIENT_SECRET is set but {prefix}_CLIENT_ID is "
                                  f"not: set both to offer sign-in with {label}")
            continue
        if not secret:
            raise ConfigError(f"{prefix}_CLIENT_ID is set but {prefix}_CLIENT_SECRET is not: "
                              f"set both to offer sign-in with {label}")
        issuer = (get(f"{prefix}_ISSUER") or default_issuer).strip().rstrip("/")
        if not issuer.startswith(("https://", "http://")):
            raise ConfigError(f"{prefix}_ISSUER must be an http(s) URL, not {issuer!r}")
        providers.append(PublicProvider(name, label, issuer, client_id, secret))
    return tuple(providers)
