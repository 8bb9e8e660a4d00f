"""Configuration from the environment (and optionally a TOML file with the same keys).

The variables and their defaults are fixed by the outside contract (shared/contract.md).
A TOML file named by TIMEBOT_CONFIG (or ./timebot.toml) may hold the same keys, either as
written (`TIMEBOT_HTTP_PORT = 8000`) or lower-case without the prefix (`http_port = 8000`);
the environment wins over the file.
"""

from __future__ import annotations

import os
import secrets
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from timebot.errors import ConfigError
from timebot.identity_providers import PublicProvider, load_identity_providers
from timebot.secret_key.strength import GENERATE_HINT, secret_key_problem
from timebot.trusted_networks import DEFAULT_TRUSTED_NETWORKS, Network, parse_networks


@dataclass(frozen=True)
class Settings:
    data_dir: Path
    database_url: str
    service_database_url: str
    service_url: str | None  # None: the embedded service
    integration_key: str | None
    http_host: str
    http_port: int
    public_url: str
    smtp_host: str
    smtp_port: int
    lmtp_port: int | None
    imap_url: str | None
    mail_domain: str
    mail_from: str
    smtp_relay: str | None
    trusted_authserv_ids: tuple[str, ...]
    dkim_txt_file: Path | None
    secret_key: str
    slack_bot_token: str | None
    slack_signing_secret: str | None
    slack_app_token: str | None
    slack_organisation: str | None
    slack_api_url: str | None
    # OAuth installs (bot/slack/oauth.py): SLACK_CLIENT_ID and SLACK_CLIENT_SECRET, both or neither.
    slack_client_id: str | None = None
    slack_client_secret: str | None = None
    extra: Mapping[str, str] = field(default_factory=dict)
    # What this process runs (TIMEBOT_ROLE): "all", "service" (the embedded service alone) or
    # "fronts" (mail, Slack, links and the scheduler against TIMEBOT_SERVICE_URL).
    role: str = "all"
    # `timebot serve --demo` (or TIMEBOT_DEMO=1): sign-in answers its code (debugPin).
    demo: bool = False
    # The worker processes of this `timebot serve` (--workers): a limit that a third party
    # sets for the whole app (Slack's pace of a workspace) is split among them.
    workers: int = 1

    @property
    def runs_service(self) -> bool:
        return self.embedded and self.role in ("all", "service")

    @property
    def runs_fronts(self) -> bool:
        return self.role in ("all", "fronts")

    @property
    def slack_configured(self) -> bool:
        """Slack is asked for: a bot token, or OAuth installs (the front checks the pair)."""
        return bool(self.slack_bot_token or self.slack_client_id or self.slack_client_secret)
    # SMTP/LMTP peers whose mail's Authentication-Results count (the MTA in front of timebot)
    mail_trusted_networks: tuple[Network, ...] = parse_networks(DEFAULT_TRUSTED_NETWORKS)
    # Non-public networks that requests to addresses an administrator chose (webhooks, custom
    # OpenID discovery) may reach all the same (TIMEBOT_OUTBOUND_ALLOWED_NETWORKS); empty: none.
    outbound_allowed_networks: tuple[Network, ...] = ()
    # TIMEBOT_LOG_LEVEL, upper case: DEBUG, INFO, WARNING, ERROR or CRITICAL.
    log_level: str = "INFO"
    # Sign in with Google / Microsoft (timebot/identity_providers.py); empty: none offered.
    identity_providers: tuple[PublicProvider, ...] = ()
    # Microsoft Teams (bot/teams): on when TEAMS_APP_ID is set, with TEAMS_APP_PASSWORD or
    # TEAMS_APP_CERTIFICATE (a PEM file: private key and certificate); TIMEBOT_TEAMS_API_URL
    # replaces Microsoft's token service and Bot Connector (tests: local fakes).
    teams_app_id: str | None = None
    teams_app_password: str | None = None
    teams_app_certificate: str | None = None
    teams_api_url: str | None = None

    @property
    def embedded(self) -> bool:
        return self.service_url is None

    @property
    def graphql_url(self) -> str:
        return self.service_url or f"http://{self.http_host}:{self.http_port}/graphql"

    @property
    def outbox_dir(self) -> Path:
        return self.data_dir / "outbox"


def _load_toml(env: Mapping[str, str]) -> dict[str, str]:
    path = Path(env.get("TIMEBOT_CONFIG", "timebot.toml"))
    if not path.is_file():
        return {}
    values: dict[str, str] = {}
    for key, value in tomllib.loads(path.read_text()).items():
        name = key if key.isupper() else (
            key.upper() if key.upper().startswith(("SLACK_", "TEAMS_"))
            else f"TIMEBOT_{key.upper()}"
        )
        values[name] = str(value)
    return values


def _secret_key(data_dir: Path) -> str:
    path = data_dir / "secret.key"
    if path.exists():
        return path.read_text().strip()
    data_dir.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(48)
    path.write_text(key)
    path.chmod(0o600)
    return key


def _configured_secret_key(value: str) -> str:
    """TIMEBOT_SECRET_KEY as configured, refused when weak or a placeholder (ConfigError)."""
    problem = secret_key_problem(value)
    if problem is not None:
        raise ConfigError(f"TIMEBOT_SECRET_KEY {problem}: {GENERATE_HINT}")
    return value


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _log_level(value: str) -> str:
    level = value.strip().upper()
    if level not in LOG_LEVELS:
        raise ConfigError(
            f"TIMEBOT_LOG_LEVEL must be one of {', '.join(v.lower() for v in LOG_LEVELS)}, "
            f"not {value!r}"
        )
    return level


def _networks(value: str, variable: str = "TIMEBOT_MAIL_TRUSTED_NETWORKS"
              ) -> tuple[Network, ...]:
    try:
        return parse_networks(value)
    except ValueError as error:
        raise ConfigError(f"{variable}: {error}") from None


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    source = dict(os.environ if env is None else env)
    merged = {**_load_toml(source), **source}

    def get(name: str, default: str | None = None) -> str | None:
        value = merged.get(name)
        return value if value not in (None, "") else default

    data_dir = Path(get("TIMEBOT_DATA_DIR", "./var") or "./var").resolve()
    host = get("TIMEBOT_HTTP_HOST", "127.0.0.1") or "127.0.0.1"
    port = int(get("TIMEBOT_HTTP_PORT", "8000") or 8000)
    mail_domain = get("TIMEBOT_MAIL_DOMAIN", "timebot.localhost") or "timebot.localhost"
    lmtp = get("TIMEBOT_LMTP_PORT")
    dkim_file = get("TIMEBOT_DKIM_TXT_FILE")
    configured_secret = get("TIMEBOT_SECRET_KEY")
    secret = (
        _configured_secret_key(configured_secret) if configured_secret is not None
        else _secret_key(data_dir)
    )
    role = (get("TIMEBOT_ROLE", "all") or "all").strip().lower()
    service_url = get("TIMEBOT_SERVICE_URL")
    check_role(role, service_url)
    return Settings(
        data_dir=data_dir,
        database_url=get("TIMEBOT_DATABASE_URL") or f"sqlite+aiosqlite:///{data_dir / 'bot.db'}",
        service_database_url=get("TIMEBOT_SERVICE_DATABASE_URL")
        or f"sqlite+aiosqlite:///{data_dir / 'service.db'}",
        service_url=service_url,
        integration_key=get("TIMEBOT_INTEGRATION_KEY"),
        http_host=host,
        http_port=port,
        public_url=(get("TIMEBOT_PUBLIC_URL") or f"http://{host}:{port}").rstrip("/"),
        smtp_host=get("TIMEBOT_SMTP_HOST", "127.0.0.1") or "127.0.0.1",
        smtp_port=int(get("TIMEBOT_SMTP_PORT", "2525") or 0),
        lmtp_port=int(lmtp) if lmtp else None,
        imap_url=get("TIMEBOT_IMAP_URL"),
        mail_domain=mail_domain,
        mail_from=get("TIMEBOT_MAIL_FROM") or f"timebot@{mail_domain}",
        smtp_relay=get("TIMEBOT_SMTP_RELAY"),
        trusted_authserv_ids=tuple(
            part.strip()
            for part in (get("TIMEBOT_MAIL_TRUSTED_AUTHSERV_IDS", "") or "").split(",")
            if part.strip()
        ),
        mail_trusted_networks=_networks(
            merged.get("TIMEBOT_MAIL_TRUSTED_NETWORKS", DEFAULT_TRUSTED_NETWORKS)
        ),
        outbound_allowed_networks=_networks(
            merged.get("TIMEBOT_OUTBOUND_ALLOWED_NETWORKS", ""), "TIMEBOT_OUTBOUND_ALLOWED_NETWORKS"
        ),
        dkim_txt_file=Path(dkim_file) if dkim_file else None,
        secret_key=secret,
        slack_bot_token=get("SLACK_BOT_TOKEN"),
        slack_signing_secret=get("SLACK_SIGNING_SECRET"),
        slack_app_token=get("SLACK_APP_TOKEN"),
        slack_organisation=get("TIMEBOT_SLACK_ORGANISATION"),
        slack_api_url=get("TIMEBOT_SLACK_API_URL"),
        slack_client_id=get("SLACK_CLIENT_ID"),
        slack_client_secret=get("SLACK_CLIENT_SECRET"),
        role=role,
        log_level=_log_level(get("TIMEBOT_LOG_LEVEL", "info") or "info"),
        demo=(get("TIMEBOT_DEMO", "") or "").strip().lower() in ("1", "true", "yes"),
        identity_providers=load_identity_providers(get),
        teams_app_id=get("TEAMS_APP_ID"),
        teams_app_password=get("TEAMS_APP_PASSWORD"),
        teams_app_certificate=get("TEAMS_APP_CERTIFICATE"),
        teams_api_url=get("TIMEBOT_TEAMS_API_URL"),
    )


ROLES = ("all", "service", "fronts")


def check_role(role: str, service_url: str | None) -> None:
    if role not in ROLES:
        raise ConfigError(f"TIMEBOT_ROLE must be one of {', '.join(ROLES)}, not {role!r}")
    if role == "fronts" and not service_url:
        raise ConfigError(
            "TIMEBOT_ROLE=fronts runs the bot against another process's service: set "
            "TIMEBOT_SERVICE_URL to its /graphql (and TIMEBOT_INTEGRATION_KEY)"
        )
    if role == "service" and service_url:
        raise ConfigError(
            "TIMEBOT_ROLE=service runs the embedded service, but TIMEBOT_SERVICE_URL points "
            "elsewhere: unset one of them"
        )
