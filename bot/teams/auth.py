"""Who sent an activity: the Bot Framework's JWT in `Authorization: Bearer …`, verified
against the signing keys the OpenID metadata names (TeamsEndpoints.openid_metadata): RS256,
the metadata's issuer, audience = TEAMS_APP_ID, exp and nbf (five minutes' clock skew, as the
Bot Framework allows). The caller then checks the token's `serviceurl` claim against the
activity's serviceUrl.

The SDK's JwtTokenValidator fixes Microsoft's key URLs and checks no issuer, so PyJWT (its
own dependency) does it here; the metadata and the keys are fetched with httpx, cached a day,
fetched again (at most once a minute) when a token names a key not seen yet."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import jwt

from bot.teams.endpoints import TeamsEndpoints

LEEWAY_SECONDS = 300
KEYS_TTL_SECONDS = 86400.0
REFETCH_SECONDS = 60.0


class Unauthorized(Exception):
    """The activity is not proven to come from the Bot Framework for this app (401)."""


class ActivityVerifier:
    def __init__(self, http: httpx.AsyncClient, endpoints: TeamsEndpoints, app_id: str) -> None:
        self.http, self.endpoints, self.app_id = http, endpoints, app_id
        self._issuer = ""
        self._keys: dict[str, jwt.PyJWK] = {}
        self._fetched = 0.0
        self._lock = asyncio.Lock()

    async def _refresh(self, force: bool) -> None:
        async with self._lock:
            age = time.monotonic() - self._fetched
            if self._keys and age < (REFETCH_SECONDS if force else KEYS_TTL_SECONDS):
                return
            try:
                metadata = (await self.http.get(self.endpoints.openid_metadata)).json()
                jwks = (await self.http.get(str(metadata["jwks_uri"]))).json()
                keys = jwt.PyJWKSet.from_dict(jwks)
            except (httpx.HTTPError, ValueError, KeyError, TypeError,
                    jwt.PyJWKSetError) as error:
                raise Unauthorized(f"signing keys unavailable: {error}") from error
            self._issuer = str(metadata.get("issuer") or "")
            self._keys = {str(key.key_id): key for key in keys.keys if key.key_id}
            self._fetched = time.monotonic()

    async def claims(self, authorization: str | None) -> dict[str, Any]:
        """The token's claims, or Unauthorized saying why."""
        scheme, _space, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized("no bearer token")
        try:
            header = jwt.get_unverified_header(token.strip())
        except jwt.PyJWTError as error:
            raise Unauthorized(f"not a JWT: {error}") from error
        kid = str(header.get("kid") or "")
        await self._refresh(force=False)
        if kid not in self._keys:
            await self._refresh(force=True)
        key = self._keys.get(kid)
        if key is None:
            raise Unauthorized("signed with an unknown key")
        try:
            claims: dict[str, Any] = jwt.decode(
                token.strip(), key=key, algorithms=["RS256"], audience=self.app_id,
                issuer=self._issuer, leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "iss", "aud"]})
        except jwt.PyJWTError as error:
            raise Unauthorized(str(error)) from error
        return claims
