"""The seam of the account page: sections that whoever installs the pages adds to /account
(e.g. a front's notification preferences). The page renders each one's fragment for the
signed-in person and routes each one's form POST to it, after checking Origin and the
session's CSRF token; a section needs nothing from the service (structural typing)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol


class AccountSection(Protocol):
    @property
    def path(self) -> str:
        """The POST route of the section's form (e.g. /account/notifications)."""
        ...

    @property
    def notices(self) -> Mapping[str, str]:
        """What the page says after a successful POST, by the outcome `handle` returned."""
        ...

    async def render(self, organisation_id: str, person_id: str, csrf: str) -> str:
        """The section's HTML (escaped by the section), with `csrf` in its forms."""
        ...

    async def handle(self, organisation_id: str, person_id: str, fields: dict[str, str]) -> str:
        """Act on the checked form: a key of `notices`, or why nothing was done."""
        ...
