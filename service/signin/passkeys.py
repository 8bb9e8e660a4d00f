"""Passkeys (WebAuthn, with the `webauthn` library): registered once from the account page,
then a way to sign in without a code. Credentials are discoverable (resident keys), so the
sign-in ceremony names no one: the browser offers the person's passkey for this site.

The relying party is the host the browser reached (the public URL's, or `localhost` for a
local run); the library checks the browser-signed origin against it.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession
from webauthn import (
    base64url_to_bytes,
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import bytes_to_base64url
from webauthn.helpers.exceptions import InvalidAuthenticationResponse, InvalidRegistrationResponse
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from service.errors import BadInput, RuleViolation
from service.models import Organisation, Person
from service.signin.models import Passkey, PasskeyChallenge
from service.signin.sso import SSO_ONLY_ALL, blocks_other_methods
from service.signin.web import digest

CHALLENGE_MS = 5 * 60_000
EXPIRED = "The passkey request has expired or was already used: try again."


@dataclass(frozen=True)
class RelyingParty:
    rp_id: str  # the host name
    origin: str  # scheme://host[:port] as the browser shows it


async def _challenge(
    session: AsyncSession, purpose: str, cookie: str, challenge: bytes, person_id: str | None,
    now_ms: int,
) -> None:
    await session.execute(delete(PasskeyChallenge).where(PasskeyChallenge.expires_ms < now_ms))
    session.add(PasskeyChallenge(
        cookie_digest=digest(cookie), purpose=purpose, challenge=bytes_to_base64url(challenge),
        person_id=person_id, expires_ms=now_ms + CHALLENGE_MS,
    ))
    await session.flush()


async def _take_challenge(
    session: AsyncSession, purpose: str, cookie: str | None, now_ms: int
) -> PasskeyChallenge:
    if not cookie:
        raise RuleViolation(EXPIRED)
    row = (await session.scalars(
        select(PasskeyChallenge).where(PasskeyChallenge.cookie_digest == digest(cookie))
    )).first()
    if row is None or row.purpose != purpose or row.expires_ms <= now_ms:
        raise RuleViolation(EXPIRED)
    await session.delete(row)  # single use
    await session.flush()
    return row


async def passkeys_of(session: AsyncSession, person: Person) -> list[Passkey]:
    return list(await session.scalars(
        select(Passkey).where(Passkey.person_id == person.id).order_by(Passkey.created_ms)
    ))


async def registration_options(
    session: AsyncSession, rp: RelyingParty, person: Person, cookie: str, now_ms: int
) -> str:
    """The options for navigator.credentials.create, as JSON."""
    existing = await passkeys_of(session, person)
    options = generate_registration_options(
        rp_id=rp.rp_id,
        rp_name="timebot",
        user_name=person.email,
        user_id=person.id.encode(),
        user_display_name=person.name,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED,
            user_verification=UserVerificationRequirement.PREFERRED,
        ),
        exclude_credentials=[
            PublicKeyCredentialDescriptor(id=base64url_to_bytes(key.credential_id))
            for key in existing
        ],
    )
    await _challenge(session, "register", cookie, options.challenge, person.id, now_ms)
    return options_to_json(options)


def _credential(payload: Any) -> dict[str, Any]:
    if isinstance(payload, str):
        try:
            payload = json.loads(payload)
        except ValueError as error:
            raise BadInput("credential", "not JSON") from error
    if not isinstance(payload, dict) or not isinstance(payload.get("rawId"), str):
        raise BadInput("credential", "not a WebAuthn credential (no rawId)")
    return payload


async def register(
    session: AsyncSession, rp: RelyingParty, person: Person, cookie: str, payload: Any,
    now_ms: int,
) -> Passkey:
    challenge = await _take_challenge(session, "register", cookie, now_ms)
    if challenge.person_id != person.id:
        raise RuleViolation(EXPIRED)
    try:
        verified = verify_registration_response(
            credential=_credential(payload),
            expected_challenge=base64url_to_bytes(challenge.challenge),
            expected_rp_id=rp.rp_id,
            expected_origin=rp.origin,
        )
    except InvalidRegistrationResponse as error:
        raise BadInput("credential", f"the passkey was not accepted: {error}") from error
    passkey = Passkey(
        credential_id=bytes_to_base64url(verified.credential_id),
        organisation_id=person.organisation_id,
        person_id=person.id,
        public_key=bytes_to_base64url(verified.credential_public_key),
        sign_count=verified.sign_count,
        created_ms=now_ms,
    )
    session.add(passkey)
    await session.flush()
    return passkey


async def signin_options(session: AsyncSession, rp: RelyingParty, cookie: str, now_ms: int) -> str:
    options = generate_authentication_options(
        rp_id=rp.rp_id, user_verification=UserVerificationRequirement.PREFERRED
    )
    await _challenge(session, "signin", cookie, options.challenge, None, now_ms)
    return options_to_json(options)


async def sign_in(
    session: AsyncSession, rp: RelyingParty, cookie: str | None, payload: Any, now_ms: int
) -> Person:
    """The person whose passkey answered this browser's challenge."""
    challenge = await _take_challenge(session, "signin", cookie, now_ms)
    credential = _credential(payload)
    passkey = (await session.scalars(
        select(Passkey).where(Passkey.credential_id == credential["rawId"])
    )).first()
    if passkey is None:
        raise BadInput("credential", "this passkey is not registered here")
    try:
        verified = verify_authentication_response(
            credential=credential,
            expected_challenge=base64url_to_bytes(challenge.challenge),
            expected_rp_id=rp.rp_id,
            expected_origin=rp.origin,
            credential_public_key=base64url_to_bytes(passkey.public_key),
            credential_current_sign_count=passkey.sign_count,
        )
    except InvalidAuthenticationResponse as error:
        raise BadInput("credential", f"the passkey was not accepted: {error}") from error
    person = await session.get(Person, passkey.person_id)
    if person is None or person.archived or person.organisation_id != passkey.organisation_id:
        raise BadInput("credential", "this passkey's person is no longer active")
    organisation = await session.get(Organisation, person.organisation_id)
    if organisation is None or blocks_other_methods(organisation):
        raise RuleViolation(SSO_ONLY_ALL)
    passkey.sign_count = verified.new_sign_count
    passkey.last_used_ms = now_ms
    await session.flush()
    return person


def new_cookie() -> str:
    return secrets.token_urlsafe(32)
