"""Errors of the time tracking service.

Hierarchy::

    ServiceError                      message shown to the client in errors[].message
    ├── ApiKeyError                   authentication (HTTP 200, data null)
    │   ├── InvalidKey                APIKeyError:InvalidKey
    │   ├── CantFindLinkedAccount     APIKeyError:CantFindLinkedAccount
    │   └── CantFindLinkedOrganisation APIKeyError:CantFindLinkedOrganisation
    │   └── CsrfRefused               a session cookie without its CSRF token
    ├── AccountInactive               HTTP 402 AccountIsInactive
    ├── PermissionDenied              not an error for the client: the field is omitted from
    │                                 data and listed in permissionsErrors
    ├── BadInput                      an argument is wrong; the message names the argument
    │   └── NotFound                  an id names nothing (visible) in the organisation
    └── RuleViolation                 the request is well formed but the rules refuse it
                                      (locked timesheet, concurrency limits, ...)
"""

from __future__ import annotations


class ServiceError(Exception):
    """Base of every error the service reports to a client."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ApiKeyError(ServiceError):
    code = "APIKeyError"

    def __init__(self, reason: str) -> None:
        super().__init__(f"APIKeyError:{reason}")


class InvalidKey(ApiKeyError):
    def __init__(self) -> None:
        super().__init__("InvalidKey")


class CantFindLinkedAccount(ApiKeyError):
    def __init__(self) -> None:
        super().__init__("CantFindLinkedAccount")


class CantFindLinkedOrganisation(ApiKeyError):
    def __init__(self) -> None:
        super().__init__("CantFindLinkedOrganisation")


class CsrfRefused(ApiKeyError):
    """A request that carries the browser session's cookie but not its CSRF token (the
    `X-Timebot-CSRF` header): the cookie alone authenticates nothing."""

    def __init__(self) -> None:
        super().__init__(
            "InvalidKey: a request authenticated by the session cookie must carry "
            "the session's CSRF token in the X-Timebot-CSRF header"
        )


class AccountInactive(ServiceError):
    http_status = 402

    def __init__(self) -> None:
        super().__init__("AccountIsInactive")


class PermissionDenied(ServiceError):
    """Raised by a resolver; the executor turns it into a `permissionsErrors` path."""

    def __init__(self, reason: str = "not authorized") -> None:
        super().__init__(reason)
        self.path_label: str | None = None


class BadInput(ServiceError):
    def __init__(self, argument: str, problem: str) -> None:
        super().__init__(f'Invalid argument "{argument}": {problem}')
        self.argument = argument
        self.problem = problem


class NotFound(BadInput):
    def __init__(self, argument: str, value: object, what: str = "item") -> None:
        super().__init__(argument, f"no {what} with id {value!r}")


class RuleViolation(ServiceError):
    """A well-formed request that the service's rules refuse; the message says which rule."""
