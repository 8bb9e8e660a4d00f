"""Errors of the timebot shell (config, GraphQL client, people directory).

Hierarchy::

    TimebotError
    ├── ConfigError                  a setting is missing or wrong
    ├── ServiceClientError           talking to the time tracking service failed
    │   ├── ServiceUnavailable       no answer, or not a GraphQL answer (network, 5xx)
    │   ├── InvalidCredentials       the key was refused (APIKeyError:*, AccountIsInactive)
    │   ├── ServiceRequestError      the service answered with errors[] (messages kept)
    │   └── PermissionRefused        the service omitted fields (permissionsErrors paths kept)
    └── DirectoryError               the people directory cannot answer
        ├── UnknownPerson            no person of the service has that e-mail / id
        └── NotLinked                the person has no key linked (hosted service)
"""

from __future__ import annotations


class TimebotError(Exception):
    """Base of the shell's exceptions."""


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
