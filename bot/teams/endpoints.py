"""Where Microsoft's services are, and where the bot may send.

Unset TIMEBOT_TEAMS_API_URL: Microsoft's token service, the Bot Framework's OpenID metadata
and the admin-consent page. Set (tests, the demo): every one of them under that base URL, the
same paths as Microsoft's, and the Bot Connector there too.

A service URL is only ever one a verified activity named (its token's `serviceurl` claim); it
must also be https on one of Microsoft's connector hosts, or under TIMEBOT_TEAMS_API_URL (plain
http only when that is loopback)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from plumbing.peers import is_loopback_host

MICROSOFT_LOGIN = "https://login.microsoftonline.com"
BOT_FRAMEWORK_LOGIN = "https://login.botframework.com"
OPENID_PATH = "/v1/.well-known/openidconfiguration"
TOKEN_PATH = "/botframework.com/oauth2/v2.0/token"
CONSENT_PATH = "/common/adminconsent"
SCOPE = "https://api.botframework.com/.default"
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
