"""People, their roles, API keys and who manages whom."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    ForeignKey,
    Index,
    String,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from plumbing.sql_constants import sql_constant
from service.model_base import Base, OrgScoped, id_column

ROLE_ADMIN = "admin"
ROLE_MANAGER = "manager"
ROLE_EMPLOYEE = "employee"
ROLE_KINDS = (ROLE_ADMIN, ROLE_MANAGER, ROLE_EMPLOYEE)
# A role made with addRole: no rights but its authorisations (service/access/permissions.py), and
# its people's records seen as an employee's are (their own, and the people they manage).
ROLE_CUSTOM = "custom"

# The person setting that marks an integration's own person (timebot's, in the embedded
# deployment): archived so that it is in no list and no workflow, yet its key answers.
INTEGRATION_SETTING = "integration"


class Role(OrgScoped, Base):
    __tablename__ = "roles"

    id: Mapped[str] = id_column()
    name: Mapped[str] = mapped_column(String(255))
    # What the role may do: admin (everything), manager (own + managed people), employee (own).
    kind: Mapped[str] = mapped_column(String(16), default=ROLE_EMPLOYEE)
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    color: Mapped[str | None] = mapped_column(String(32), nullable=True)
    # The role's permissions beyond its kind's defaults (service/access/permissions.py), by name:
    # {"billingRates": {"view": ["all"], "manage": []}}. Read with the key by authentication.
    authorisations: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class Person(OrgScoped, Base):
    __tablename__ = "persons"
    __table_args__ = (
        UniqueConstraint("organisation_id", "email", name="uq_persons_org_email"),
        # A role's people: the administrators every submission names as approvers are read
        # by their role, not found among every person of the organisation.
        Index("ix_persons_role_id", "role_id"),
    )

    id: Mapped[str] = id_column()
    name: Mapped[str] = mapped_column(String(255))
    email: Mapped[str] = mapped_column(String(320))
    role_id: Mapped[str] = mapped_column(String(24), ForeignKey("roles.id"))
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    color: Mapped[str | None] = mapped_column(String(32), nullable=True)
    lang: Mapped[str | None] = mapped_column(String(16), nullable=True)
    timezone: Mapped[str | None] = mapped_column(String(64), nullable=True)
    currency: Mapped[str | None] = mapped_column(String(3), nullable=True)
    start_date_ms: Mapped[int] = mapped_column(BigInteger)
    # Person-level settings (approval preference, timesheet rules, ...), keyed by name.
    settings: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_ms: Mapped[int] = mapped_column(BigInteger)

    role: Mapped[Role] = relationship(lazy="joined")

    @property
    def may_authenticate(self) -> bool:
        """Whether the person's key (GraphQL, legacy token) answers: an archived person's
        does not, except an integration's own person's."""
        return not self.archived or bool((self.settings or {}).get(INTEGRATION_SETTING))


# The kinds of GraphQL keys: the person's one key of the user menu ("Your API key", the
# account page), stored as issued and shown again; and the extra keys a person makes for
# integrations (createApiKey), stored as the SHA-256 digest of the key, never shown again.
KEY_ACCOUNT = "account"
KEY_INTEGRATION = "integration"
# The kinds as SQL literals, for comparisons with `kind` (plumbing.sql_constants: the partial
# index below would otherwise have SQLite prepare the statement at every run).
ACCOUNT_KIND = sql_constant(KEY_ACCOUNT)
INTEGRATION_KIND = sql_constant(KEY_INTEGRATION)


class ApiKey(Base):
    """GraphQL keys: exactly one `account` key per person, any number of `integration` keys.
    No foreign keys on purpose: a key outlives a deleted person or organisation so that the
    service can say which one is gone. Authentication reads this row on every request (no
    cache): a revoked or expired key is refused from the next request on, in every process."""

    __tablename__ = "api_keys"
    __table_args__ = (
        Index("uq_api_keys_account_person", "person_id", unique=True,
              sqlite_where=text("kind = 'account'"),
              postgresql_where=text("kind = 'account'")),
    )

    # The key itself (account) or its SHA-256 hex digest (integration).
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    person_id: Mapped[str] = mapped_column(String(24), index=True)
    organisation_id: Mapped[str] = mapped_column(String(24), index=True)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    kind: Mapped[str] = mapped_column(String(16), default=KEY_ACCOUNT,
                                      server_default=KEY_ACCOUNT)
    # What getApiKeys shows of an integration key: its first characters and an ellipsis.
    hint: Mapped[str | None] = mapped_column(String(16), nullable=True)
    expire_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    revoked_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class PersonManager(OrgScoped, Base):
    """`manager_id` is a people manager of `person_id` (makeManagerOfPerson)."""

    __tablename__ = "person_managers"
    __table_args__ = (
        Index("ix_person_managers_person", "person_id"),
        UniqueConstraint("manager_id", "person_id", name="uq_person_managers_manager_person"),
    )

    id: Mapped[str] = id_column()
    manager_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("persons.id", ondelete="CASCADE"), index=True
    )
    person_id: Mapped[str] = mapped_column(String(24), ForeignKey("persons.id", ondelete="CASCADE"))
    created_ms: Mapped[int] = mapped_column(BigInteger)
