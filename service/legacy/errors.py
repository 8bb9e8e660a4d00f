"""What a legacy request can fail with.

Hierarchy::

    LegacyError                 HTTP 200, {"status": "error", "message": ...}
    ├── InvalidServiceRequest   unknown service, malformed body or payload; the message
    │                           starts with INVALID_SERVICE_REQUEST
    ├── LegacyNotFound          the company, project, person... a request names is not there
    └── LegacyHttpError         any other HTTP status (the body still says status/message)
        ├── AuthenticationFailed   401, with a WWW-Authenticate challenge
        ├── AccountInactive        402 (the subscription), as on the GraphQL interface
        ├── ApiCallsDisabled       403 (the account setting "Enable/Disable API calls")
        └── DailyLimitExceeded     429 until the next UTC day, with Retry-After

Errors of the service itself (service.errors: BadInput, NotFound, RuleViolation,
PermissionDenied) are reported as HTTP 200 with status "error" and their message.
"""

from __future__ import annotations

from typing import Any

INVALID_SERVICE_REQUEST = "Invalid service request"


class LegacyError(Exception):
    http_status = 200

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def headers(self) -> dict[str, str]:
        return {}


class InvalidServiceRequest(LegacyError):
    def __init__(self, problem: str) -> None:
        super().__init__(f"{INVALID_SERVICE_REQUEST}: {problem}")


class LegacyNotFound(LegacyError):
    def __init__(self, what: str, ref: dict[str, Any] | None) -> None:
        named = ", ".join(f"{key} {value!r}" for key, value in (ref or {}).items())
        super().__init__(f"{what} not found" + (f": {named}" if named else ""))


class LegacyHttpError(LegacyError):
    http_status = 400


class AuthenticationFailed(LegacyHttpError):
    http_status = 401

    def headers(self) -> dict[str, str]:
        return {"WWW-Authenticate": 'Basic realm="timebot legacy API v2", charset="UTF-8"'}


class AccountInactive(LegacyHttpError):
    http_status = 402

    def __init__(self) -> None:
        super().__init__("AccountIsInactive")


class ApiCallsDisabled(LegacyHttpError):
    http_status = 403

    def __init__(self) -> None:
        super().__init__(
            "API calls are disabled for this account (account setting Enable/Disable API calls)"
        )


class DailyLimitExceeded(LegacyHttpError):
    http_status = 429

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after_s)}
