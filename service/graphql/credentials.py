"""Who a GraphQL request is: an `apikey` header, or a browser session cookie with its CSRF
token (`X-Timebot-CSRF`), or nobody, which only the sign-in mutations accept (and the
report link's query, whose token is its credential).

A request without credentials is parsed only when it is small and names a sign-in mutation:
everything else is refused before its document is read, as a request with a bad key is.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphql import FieldNode, OperationType
from sqlalchemy.ext.asyncio import AsyncSession

from service.errors import ApiKeyError, CsrfRefused, InvalidKey
from service.graphql.auth import authenticate
from service.graphql.documents import Prepared
from service.models import Organisation, Person
from service.people.models import KEY_INTEGRATION
from service.signin.sessions import SignedIn, by_token
from service.signin.web import WebExchange

# The operations a browser needs before it has a session.
ANONYMOUS_FIELDS = frozenset({"requestSignin", "signin", "requestSignup", "signup", "join"})
# The queries a link carries its own credential for (a report's token).
ANONYMOUS_QUERY_FIELDS = frozenset({"getReportResultFromToken"})
MAX_ANONYMOUS_CHARS = 2_000


@dataclass
class Identity:
    organisation: Organisation
    person: Person
    signed_in: SignedIn | None = None
    # Authenticated by an integration key (createApiKey), not the person's own key.
    integration_key: bool = False


def has_credentials(apikey: str | None, web: WebExchange | None) -> bool:
    return bool(apikey and apikey.strip()) or (web is not None and web.session_csrf_ok)


def missing_credentials(web: WebExchange | None) -> ApiKeyError:
    """The refusal of a request without usable credentials (saying so when a session cookie
    came without its CSRF token)."""
    if web is not None and web.session_token is not None:
        return CsrfRefused()
    return InvalidKey()


def may_be_anonymous(query: str) -> bool:
    """Cheap test before parsing: could this be a sign-in (sign-up, join) mutation, or a
    report link's query?"""
    return len(query) <= MAX_ANONYMOUS_CHARS and (
        "ignin" in query or "ignup" in query or "join" in query or "FromToken" in query
    )


def is_anonymous_operation(prepared: Prepared, operation_name: str | None,
                           sessionless: bool = False) -> bool:
    """Whether the operation runs without credentials. `sessionless` (a call without a
    browser's side, as timebot's pages make in process): only the link queries, whose token
    is their credential; the sign-in mutations need the browser's cookies."""
    operation = prepared.operation(operation_name)
    if operation is None or operation.operation not in (OperationType.MUTATION,
                                                        OperationType.QUERY):
        return False
    if sessionless and operation.operation == OperationType.MUTATION:
        return False
    allowed = (ANONYMOUS_FIELDS if operation.operation == OperationType.MUTATION
               else ANONYMOUS_QUERY_FIELDS)
    selections = operation.selection_set.selections
    return bool(selections) and all(
        isinstance(selection, FieldNode) and selection.name.value in allowed
        for selection in selections
    )


async def identify(
    session: AsyncSession, apikey: str | None, web: WebExchange | None, now_ms: int
) -> Identity:
    """The request's person (raising the ServiceError that refuses it). A key wins over a
    cookie; a session is not refused for an inactive subscription."""
    if apikey and apikey.strip():
        organisation, person, kind = await authenticate(session, apikey, now_ms)
        return Identity(organisation, person, integration_key=kind == KEY_INTEGRATION)
    if web is not None and web.session_csrf_ok:
        signed_in = await by_token(session, web.session_token, now_ms)
        return Identity(signed_in.organisation, signed_in.person, signed_in)
    raise missing_credentials(web)
