"""The SMTP relay as a deliverer of the outbox (mail.queues.outbox): its settings
(TIMEBOT_SMTP_RELAY), the exchange (aiosmtplib: STARTTLS, SMTPS, AUTH), and what the relay's
answers mean for the message: delivered, refused for now (retried), or refused for good."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import aiosmtplib
import structlog

from mail.queues.relay_sessions import RelaySession, RelaySessions

log = structlog.get_logger("mail.outbound")


class DeliveryError(Exception):
    """The deliverer could not hand the message on: `permanent` when the relay refused it for
    good (a 5xx to the message: it ends), else for now (tried again later)."""

    def __init__(self, message: str, permanent: bool) -> None:
        super().__init__(message)
        self.permanent = permanent


_MESSAGE_REFUSALS = (
    aiosmtplib.SMTPSenderRefused, aiosmtplib.SMTPRecipientRefused, aiosmtplib.SMTPDataError,
)


def relay_failure(error: Exception) -> DeliveryError:
    """What an aiosmtplib error means for the message. A 5xx to the message itself — at MAIL
    FROM, RCPT (every recipient refused: SMTPRecipientsRefused, which carries no code of its
    own) or DATA — is permanent; a 4xx, a lost connection, a refused login or greeting (the
    relay's state or our settings, not this message) are temporary. So is a message the relay
    cannot take at all (SMTPUTF8 needed, not offered): permanent."""
    if isinstance(error, aiosmtplib.SMTPRecipientsRefused):
        codes = [refusal.code for refusal in error.recipients]
        text = "; ".join(f"{r.recipient}: {r.code} {r.message}" for r in error.recipients)
        return DeliveryError(f"recipients refused: {text}",
                             bool(codes) and all(code >= 500 for code in codes))
    if isinstance(error, _MESSAGE_REFUSALS):
        return DeliveryError(f"{error.code} {error.message}", error.code >= 500)
    if isinstance(error, aiosmtplib.SMTPNotSupported):
        return DeliveryError(f"the relay cannot take this message: {error}", permanent=True)
    if isinstance(error, aiosmtplib.SMTPResponseException):
        return DeliveryError(f"{error.code} {error.message}", permanent=False)
    return DeliveryError(str(error) or type(error).__name__, permanent=False)


@dataclass(frozen=True)
class RelaySettings:
    host: str
    port: int
    implicit_tls: bool = False
    username: str | None = None
    password: str | None = None

    @classmethod
    def parse(cls, value: str) -> RelaySettings:
        """`host:port`, `smtp://[user:pass@]host:port` (STARTTLS when offered) or `smtps://…`."""
        text = value if "://" in value else f"smtp://{value}"
        parts = urlsplit(text)
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise ValueError(f"TIMEBOT_SMTP_RELAY must be host:port or smtp[s]://…, not {value!r}")
        implicit = parts.scheme == "smtps"
        return cls(
            host=parts.hostname,
            port=parts.port or (465 if implicit else 25),
            implicit_tls=implicit,
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
        )


class SmtpRelay:
    idempotent = False  # a relay cannot tell a repeated message from a new one

    def __init__(self, settings: RelaySettings, timeout: float = 30.0,
                 sessions: RelaySessions | None = None) -> None:
        self.settings = settings
        self.timeout = timeout
        self.sessions = sessions if sessions is not None else RelaySessions()

    async def deliver(
        self, raw: bytes, envelope_from: str, rcpt_tos: list[str], *, key: str
    ) -> None:
        session = await self.sessions.take() or await self._open()
        try:
            errors, _ = await session.client.sendmail(envelope_from, rcpt_tos, raw)
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as error:
            self.sessions.discard(session)
            raise relay_failure(error) from error
        except BaseException:  # cancelled mid-exchange: the session's state is unknown
            self.sessions.discard(session)
            raise
        self.sessions.give_back(session)
        if errors:  # some recipients took it: sending again would repeat it to them
            log.warning("mail_recipients_refused", key=key,
                        refused={rcpt: f"{r.code} {r.message}" for rcpt, r in errors.items()})

    async def _open(self) -> RelaySession:
        relay = self.settings
        # The client object rather than aiosmtplib.send: receipts go out with a null
        # envelope sender (MAIL FROM:<>), which send() refuses.
        client = aiosmtplib.SMTP(
            hostname=relay.host,
            port=relay.port,
            use_tls=relay.implicit_tls,
            start_tls=None if not relay.implicit_tls else False,
            username=relay.username,
            password=relay.password,
            timeout=self.timeout,
        )
        try:
            await client.connect()
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as error:
            client.close()
            raise relay_failure(error) from error
        return self.sessions.opening(client)

    async def close(self) -> None:
        """The open sessions ended (the outbox worker stops)."""
        await self.sessions.close()
