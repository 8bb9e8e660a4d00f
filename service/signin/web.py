"""What sign-in needs from the HTTP exchange: the browser's cookies in, cookies to set out,
the client's address, and the process's sign-in configuration (demo mode, secure cookies,
who to wake when a code mail is waiting).

The session cookie is HttpOnly and SameSite=Lax (Secure when the public URL is https). A
request authenticated by it must also carry the session's CSRF token (a form field, or the
`X-Timebot-CSRF` header for GraphQL): derived from the cookie's secret, it is unknown to a
page of another origin, and a cross-site form cannot set a header.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from dataclasses import dataclass, field
from http.cookies import SimpleCookie

SESSION_COOKIE = "timebot_session"
PENDING_COOKIE = "timebot_pending"
CSRF_HEADER = "x-timebot-csrf"
SESSION_DAYS = 30


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def csrf_token(session_token: str) -> str:
    """The synchroniser token of a session: a function of its secret, stored nowhere."""
    return hmac.new(session_token.encode("utf-8"), b"timebot-csrf", hashlib.sha256).hexdigest()


def csrf_matches(session_token: str, offered: str | None) -> bool:
    return bool(offered) and hmac.compare_digest(csrf_token(session_token), offered or "")


@dataclass
class SigninConfig:
    """One per process (the embedded service's)."""

    demo: bool = False  # `timebot serve --demo`: requestSignin answers the code (debugPin)
    # to a client on this machine
    secure_cookies: bool = False  # the public URL is https
    public_url: str = ""  # for links in sign-in mail
    mail_hooks: list[Callable[[], None]] = field(default_factory=list)

    def mail_queued(self) -> None:
        """A sign-in code was written to the service's mail: hand it over now."""
        for hook in self.mail_hooks:
            hook()

    def set_cookie(self, name: str, value: str, max_age: int) -> str:
        parts = [f"{name}={value}", "Path=/", f"Max-Age={max_age}", "HttpOnly", "SameSite=Lax"]
        if self.secure_cookies:
            parts.append("Secure")
        return "; ".join(parts)


def parse_cookies(header: str | None) -> dict[str, str]:
    if not header:
        return {}
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except Exception:  # a malformed cookie header is no cookie
        return {}
    return {name: morsel.value for name, morsel in jar.items()}


@dataclass
class WebExchange:
    """One HTTP request's side of sign-in."""

    config: SigninConfig
    client_ip: str
    user_agent: str = ""
    # From this machine (plumbing.peers.is_local_request): only such a client is shown the
    # demo's sign-in code (debugPin).
    local: bool = False
    cookies: dict[str, str] = field(default_factory=dict)
    set_cookies: list[str] = field(default_factory=list)
    csrf_offered: str | None = None
    mail_waiting: bool = False  # a code mail was written: wake the hand-over after commit

    @property
    def session_token(self) -> str | None:
        return self.cookies.get(SESSION_COOKIE) or None

    @property
    def session_csrf_ok(self) -> bool:
        token = self.session_token
        return token is not None and csrf_matches(token, self.csrf_offered)

    def set(self, name: str, value: str, max_age: int) -> None:
        self.set_cookies.append(self.config.set_cookie(name, value, max_age))

    def clear(self, name: str) -> None:
        self.set_cookies.append(self.config.set_cookie(name, "", 0))
