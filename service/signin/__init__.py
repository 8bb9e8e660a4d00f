"""Interactive sign-in: e-mail codes (`codes`), browser sessions and takeovers (`sessions`),
and what the HTTP layer tells them about the browser (`web`)."""

from typing import TYPE_CHECKING

from service.face import face_attribute

if TYPE_CHECKING:
    from service.signin.codes import normalise_email
    from service.signin.sessions import SESSION_MS, SignedIn, open_session
    from service.signin.web import SESSION_COOKIE, WebExchange, digest

__all__ = [
    "SESSION_COOKIE",
    "SESSION_MS",
    "SignedIn",
    "WebExchange",
    "digest",
    "normalise_email",
    "open_session",
]


def __getattr__(name: str) -> object:
    return face_attribute(__name__, name)
