"""Where the workspace's state (bot.slack.workspace) stops the bot:

- `GatedClient`, the bot's Web API client: while the app is uninstalled it answers every call
  itself (`app_uninstalled`, no request to Slack; SLACK_BOT_TOKEN's `auth.test` still goes,
  to notice a reinstall), and a call that Slack refuses for the token (`INSTALLATION_ERRORS`)
  records the workspace as uninstalled.
- `WorkspaceGate`, the first of the app's middleware: a request from another team (or
  enterprise) than the workspace's is acked with "not connected", logged and never acted on;
  a request from the workspace while it is uninstalled probes `auth.test` (a reinstall:
  SLACK_BOT_TOKEN's workspace only), and is dropped when that fails.
- The `app_uninstalled` and `tokens_revoked` listeners.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from slack_bolt.async_app import AsyncApp
from slack_bolt.middleware.async_middleware import AsyncMiddleware
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from bot.slack.workspace import INSTALLATION_ERRORS, UNINSTALLED, Workspace

log = structlog.get_logger("timebot.slack.installation")

NOT_CONNECTED = "This workspace is not connected to timebot."
UNINSTALL_EVENTS = ("app_uninstalled", "tokens_revoked")
ALWAYS_CALLED = "auth.test"


class GatedClient(AsyncWebClient):
    """The Web API client that asks `workspace` before each call (see the module)."""

    workspace: Workspace | None = None

    async def api_call(  # type: ignore[override]
        self, api_method: str, *, http_verb: str = "POST", **kwargs: Any
    ) -> AsyncSlackResponse:
        workspace = self.workspace
        if workspace is not None and (api_method != ALWAYS_CALLED or not workspace.probed) \
                and not await workspace.active():
            answer = AsyncSlackResponse(
                client=self, http_verb=http_verb, api_url=api_method, req_args={},
                data={"ok": False, "error": UNINSTALLED}, headers={}, status_code=200)
            raise SlackApiError(f"not called: {UNINSTALLED}", answer)  # type: ignore[no-untyped-call]
        try:
            return await super().api_call(api_method, http_verb=http_verb, **kwargs)
        except SlackApiError as error:
            code = str(error.response.get("error") or "")
            if workspace is not None and code in INSTALLATION_ERRORS \
                    and api_method != ALWAYS_CALLED:  # a probe records its own outcome
                await workspace.uninstalled(code)
            raise


def _kind(body: dict[str, Any]) -> str:
    if body.get("command"):
        return f"command {body.get('command')}"
    if body.get("type") == "event_callback":
        return f"event {(body.get('event') or {}).get('type')}"
    return str(body.get("type") or "request")


class WorkspaceGate(AsyncMiddleware):
    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._answers: set[asyncio.Task[None]] = set()

    async def async_process(
        self, *, req: AsyncBoltRequest, resp: BoltResponse,
        next: Callable[[], Awaitable[BoltResponse]],
    ) -> BoltResponse:
        body = req.body if isinstance(req.body, dict) else {}
        team_id, enterprise_id = req.context.team_id, req.context.enterprise_id
        admitted = await self.workspace.admits(team_id, enterprise_id)
        if admitted is None:  # nothing to compare with: nothing is done
            log.warning("slack_team_unknown", team=team_id, kind=_kind(body),
                        effect="ignored: auth.test has not answered with the token's team")
            return BoltResponse(status=200, body="")
        if not admitted:
            log.warning("slack_foreign_request", team=team_id, enterprise=enterprise_id,
                        kind=_kind(body), effect="ignored: not this workspace")
            return self._not_connected(req, body)
        event = body.get("event") if body.get("type") == "event_callback" else None
        uninstalling = isinstance(event, dict) and event.get("type") in UNINSTALL_EVENTS
        if not uninstalling and not await self.workspace.active() \
                and not await self.workspace.probe():
            log.info("slack_request_while_uninstalled", team=team_id, kind=_kind(body))
            return BoltResponse(status=200, body="")
        return await next()

    def _not_connected(self, req: AsyncBoltRequest, body: dict[str, Any]) -> BoltResponse:
        if body.get("command"):  # the ack's body is shown to the user alone
            return BoltResponse(status=200, body=json.dumps(
                {"response_type": "ephemeral", "text": NOT_CONNECTED}),
                headers={"content-type": "application/json"})
        respond = req.context.respond
        if body.get("type") == "block_actions" and respond is not None:
            task = asyncio.create_task(self._answer(respond))
            self._answers.add(task)
            task.add_done_callback(self._answers.discard)
        return BoltResponse(status=200, body="")

    @staticmethod
    async def _answer(respond: Any) -> None:
        try:
            await respond(text=NOT_CONNECTED, response_type="ephemeral",
                          replace_original=False)
        except Exception as error:  # a response_url that answers nothing useful
            log.info("slack_not_connected_unanswered", error=str(error))


def register(app: AsyncApp, workspace: Workspace,
             gone: Callable[[], Awaitable[None]] | None = None) -> None:
    """The uninstall events' listeners (the gate itself is installed by bot.app). `gone`: an
    OAuth installation's, which deletes its tokens once the workspace is recorded
    uninstalled."""

    async def uninstalled(reason: str) -> None:
        await workspace.uninstalled(reason)
        if gone is not None:
            await gone()

    async def on_uninstalled(event: dict[str, Any]) -> None:
        await uninstalled("app_uninstalled")

    async def on_tokens_revoked(event: dict[str, Any]) -> None:
        if (event.get("tokens") or {}).get("bot"):  # user tokens alone: the bot still works
            await uninstalled("tokens_revoked")

    app.event("app_uninstalled")(on_uninstalled)
    app.event("tokens_revoked")(on_tokens_revoked)

