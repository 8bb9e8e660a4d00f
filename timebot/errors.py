"""Errors of timebot's ground (config, GraphQL client, people directory, signed tokens).

Hierarchy::

    TimebotError
    ├── ConfigError                  a setting is missing or wrong
    ├── ServiceClientError           talking to the time tracking service failed
    │   ├── ServiceUnavailable       no answer, or not a GraphQL answer (network, 5xx)
    │   ├── InvalidCredentials       the key was refused (APIKeyError:*)
    │   ├── ServiceRequestError      the service answered with errors[] (messages kept)
    │   │   └── AccountInactive      the organisation's subscription is inactive (HTTP 402)
    │   └── PermissionRefused        the service omitted fields (permissionsErrors paths kept)
    ├── DirectoryError               the people directory cannot answer
    │   ├── UnknownPerson            no person of the service has that e-mail / id
    │   └── NotLinked                the person has no key linked (hosted service)
    ├── TokenError                   a reply token / one-click link token is refused
    │   ├── TokenMalformed           not a token of ours at all (wrong length, alphabet, fields)
    │   ├── TokenTampered            well formed, but the signature does not match
    │   └── TokenExpired             genuine, but past its expiry (`.token` holds the payload)
    ├── TokenMissing                 a message carries no token of ours anywhere
    └── ReviewChannelFailed          a channel failed to send review requests (the event retries)

The token errors live in timebot.secret_key.tokens, ReviewChannelFailed in
timebot.notify.review_dispatch, with the code that raises them.
"""

from __future__ import annotations


class TimebotError(Exception):
    """Base of the ground's exceptions."""


class ConfigError(TimebotError):
    pass


class ServiceClientError(TimebotError):
    pass


class ServiceUnavailable(ServiceClientError):
    pass


class ServiceRequestError(ServiceClientError):
    def __init__(self, messages: list[str]) -> None:
        super().__init__("; ".join(messages) or "the service reported an error")
        self.messages = messages


class InvalidCredentials(ServiceRequestError):
    pass


class AccountInactive(ServiceRequestError):
    """The key is good but its organisation's subscription is inactive: every request is
    refused until an administrator reactivates it. Its text is meant for the person."""

    PLAIN = (
        "your organisation's subscription is inactive, so the time tracking service refuses "
        "every request for now; nothing was changed. An administrator can reactivate it"
    )

    def __init__(self, messages: list[str]) -> None:
        super().__init__(messages)
        self.args = (self.PLAIN,)

    def __str__(self) -> str:
        return self.PLAIN


class PermissionRefused(ServiceClientError):
    def __init__(self, paths: list[str]) -> None:
        super().__init__(f"not permitted: {', '.join(paths)}")
        self.paths = paths


class DirectoryError(TimebotError):
    pass


class UnknownPerson(DirectoryError):
    pass


class NotLinked(DirectoryError):
    pass
