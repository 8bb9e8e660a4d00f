"""Where Microsoft's services are, and where the bot may send.

Unset TIMEBOT_TEAMS_API_URL: Microsoft's token service, the Bot Framework's OpenID metadata,
the admin-consent page and Microsoft Graph. Set (tests, the demo): every one of them under that
base URL, the same paths as Microsoft's (Graph's `/v1.0/…`, a tenant's token service
`/<tenant>/oauth2/v2.0/token`), and the Bot Connector there too.

A service URL is only ever one a verified activity named (its token's `serviceurl` claim); it
must also be https on one of Microsoft's connector hosts, or under TIMEBOT_TEAMS_API_URL (plain
http only when that is loopback)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from plumbing.peers import is_loopback_host

MICROSOFT_LOGIN = "https://login.microsoftonline.com"
BOT_FRAMEWORK_LOGIN = "https://login.botframework.com"
OPENID_PATH = "/v1/.well-known/openidconfiguration"
TOKEN_PATH = "/botframework.com/oauth2/v2.0/token"
CONSENT_PATH = "/common/adminconsent"
SCOPE = "https://api.botframework.com/.default"
GRAPH = "https://graph.microsoft.com"
GRAPH_VERSION = "/v1.0"
GRAPH_SCOPE = "https://graph.microsoft.com/.default"
_TENANT_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
                        re.IGNORECASE)
# The Bot Connector's hosts (Teams names e.g. https://smba.trafficmanager.net/emea/).
CONNECTOR_HOSTS = ("smba.trafficmanager.net", ".botframework.com", ".botframework.azure.us",
                   ".teams.microsoft.com", ".trafficmanager.net")


class UntrustedUrl(ValueError):
    """A service URL the bot does not send to."""


@dataclass(frozen=True)
class TeamsEndpoints:
    openid_metadata: str
    token: str
    consent: str
    base: str | None  # TIMEBOT_TEAMS_API_URL, without a trailing slash

    @property
    def graph(self) -> str:
        """Microsoft Graph's v1.0 root (no trailing slash)."""
        return (self.base or GRAPH) + GRAPH_VERSION

    def tenant_token(self, tenant_id: str) -> str:
        """The token service of one tenant (its own authority: a Graph token is the tenant's);
        UntrustedUrl when `tenant_id` is not a tenant id (a GUID)."""
        if not _TENANT_ID.fullmatch(tenant_id):
            raise UntrustedUrl(f"not a tenant id: {tenant_id[:64]!r}")
        return f"{self.base or MICROSOFT_LOGIN}/{tenant_id.lower()}/oauth2/v2.0/token"

    @classmethod
    def of(cls, api_url: str | None) -> TeamsEndpoints:
        if not api_url:
            return cls(BOT_FRAMEWORK_LOGIN + OPENID_PATH, MICROSOFT_LOGIN + TOKEN_PATH,
                       MICROSOFT_LOGIN + CONSENT_PATH, None)
        base = api_url.rstrip("/")
        parts = urlsplit(base)
        if parts.scheme != "https" and not (parts.scheme == "http"
                                            and is_loopback_host(parts.netloc)):
            raise UntrustedUrl("TIMEBOT_TEAMS_API_URL is https, or http on loopback only")
        return cls(base + OPENID_PATH, base + TOKEN_PATH, base + CONSENT_PATH, base)

    def check_service_url(self, service_url: str) -> str:
        """The service URL normalised (one trailing slash), or UntrustedUrl."""
        url = service_url.strip()
        if not url:
            raise UntrustedUrl("no service URL")
        normalised = url.rstrip("/") + "/"
        if self.base is not None:
            if not normalised.startswith(self.base + "/"):
                raise UntrustedUrl(f"not under TIMEBOT_TEAMS_API_URL: {url[:100]}")
            return normalised
        parts = urlsplit(normalised)
        host = (parts.hostname or "").lower()
        if parts.scheme != "https" or not any(
                host == name.lstrip(".") or host.endswith(name) for name in CONNECTOR_HOSTS):
            raise UntrustedUrl(f"not a Bot Connector URL: {url[:100]}")
        return normalised
