"""Integration webhooks: administrators register receivers, read and rotate their secrets.
Deliveries are queued by the areas that emit events (service/webhooks/queue.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from ariadne import MutationType, ObjectType
from sqlalchemy import select

from service.access import SETTINGS, require
from service.errors import BadInput
from service.graphql.context import RequestContext
from service.lookup import get_in_org
from service.models import IntegrationWebhook, Organisation
from service.value_words import described
from service.webhooks.queue import ALL_EVENTS, EVENTS, new_secret

mutation = MutationType()
organisation_type = ObjectType("SvcOrganisation")
integrations_type = ObjectType("SvcIntegrations")


def require_admin(context: RequestContext) -> None:
    require(context, SETTINGS, "manage webhooks")


def _name(name: str) -> str:
    if not name.strip() or len(name) > 255:
        raise BadInput("name", "must be a non-empty name of at most 255 characters")
    return name.strip()


def _url(url: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or len(url) > 2048:
        raise BadInput("url", f"must be an http(s) URL, got {described(url)}")
    return url.strip()


def _events(events: Sequence[str | None]) -> list[str]:
    chosen: list[str] = []
    for index, event in enumerate(events):
        if event not in (*EVENTS, ALL_EVENTS):
            raise BadInput(
                f"events[{index}]", f"unknown event {event!r}; known: {', '.join(EVENTS)} or *"
            )
        if event not in chosen:
            chosen.append(event)
    if not chosen:
        raise BadInput("events", "name at least one event")
    return chosen


async def _webhook(context: RequestContext, webhook_id: str) -> IntegrationWebhook:
    require_admin(context)
    return await get_in_org(context.session, IntegrationWebhook, context.org_id, webhook_id,
                            "id", "webhook")


@organisation_type.field("integrations")
def resolve_integrations(organisation: Organisation, _info: Any) -> Organisation:
    return organisation


@integrations_type.field("webhooks")
async def resolve_webhooks(organisation: Organisation, info: Any) -> list[IntegrationWebhook]:
    context: RequestContext = info.context
    require_admin(context)
    rows = await context.session.scalars(
        select(IntegrationWebhook)
        .where(IntegrationWebhook.organisation_id == organisation.id)
        .order_by(IntegrationWebhook.created_ms, IntegrationWebhook.id)
    )
    return list(rows)


@mutation.field("addIntegrationWebhook")
async def resolve_add_webhook(
    _root: Any, info: Any, name: str, url: str, events: Sequence[str | None]
) -> Organisation:
    context: RequestContext = info.context
    require_admin(context)
    context.session.add(
        IntegrationWebhook(
            organisation_id=context.org_id, name=_name(name), url=_url(url),
            events=_events(events), secret=new_secret(), active=True,
            created_ms=context.now_ms,
        )
    )
    return context.organisation


@mutation.field("editIntegrationWebhookName")
async def resolve_edit_name(_root: Any, info: Any, id: str, name: str) -> Organisation:
    webhook = await _webhook(info.context, id)
    webhook.name = _name(name)
    return info.context.organisation  # type: ignore[no-any-return]


@mutation.field("editIntegrationWebhookUrl")
async def resolve_edit_url(_root: Any, info: Any, id: str, url: str) -> Organisation:
    webhook = await _webhook(info.context, id)
    webhook.url = _url(url)
    return info.context.organisation  # type: ignore[no-any-return]


@mutation.field("editIntegrationWebhookEvents")
async def resolve_edit_events(
    _root: Any, info: Any, id: str, events: Sequence[str | None]
) -> Organisation:
    webhook = await _webhook(info.context, id)
    webhook.events = _events(events)
    return info.context.organisation  # type: ignore[no-any-return]


@mutation.field("editIntegrationWebhookActive")
async def resolve_edit_active(_root: Any, info: Any, id: str, active: bool) -> Organisation:
    webhook = await _webhook(info.context, id)
    webhook.active = active
    return info.context.organisation  # type: ignore[no-any-return]


@mutation.field("deleteIntegrationWebhook")
async def resolve_delete(_root: Any, info: Any, id: str) -> Organisation:
    webhook = await _webhook(info.context, id)
    await info.context.session.delete(webhook)
    return info.context.organisation  # type: ignore[no-any-return]


@mutation.field("regenerateIntegrationWebhookSecret")
async def resolve_regenerate(_root: Any, info: Any, id: str) -> Organisation:
    webhook = await _webhook(info.context, id)
    webhook.secret = new_secret()
    return info.context.organisation  # type: ignore[no-any-return]


BINDABLES = [mutation, organisation_type, integrations_type]
