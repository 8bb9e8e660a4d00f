"""What the service's pages are told by whoever installs them: the public URL, the secret key
that signs an OpenID Connect flow's cookie, and the deployment's public identity providers
(sign in with Google, with Microsoft)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


class IdentityProvider(Protocol):
    """One of the deployment's OpenID Connect clients (structural: any object with these)."""

    @property
    def name(self) -> str:  # the path segment: /sso/<name>/initiate
        ...

    @property
    def label(self) -> str:  # shown on the sign-in button
        ...

    @property
    def issuer(self) -> str: ...

    @property
    def client_id(self) -> str: ...

    @property
    def client_secret(self) -> str: ...


@dataclass(frozen=True)
class PagesConfig:
    public_url: str
    secret_key: str
    demo: bool = False  # requestSignin answers its code (debugPin)
    identity_providers: Sequence[IdentityProvider] = ()
