"""The Slack app: one slack-bolt AsyncApp and its Web API client.

The parts (bot.slack.component installs them) add their listeners to the app. Listeners ack at once;
the work runs after the ack (bolt's default `process_before_response=False`), so a slash
command is acknowledged in milliseconds whatever the service does.
"""

from __future__ import annotations

import logging

import aiohttp
from slack_bolt.async_app import AsyncApp
from slack_bolt.authorization.async_authorize import AsyncAuthorize
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_sdk.web.async_client import AsyncWebClient

from bot.slack.dedup import SlackDeduplication, gate_listeners
from bot.slack.installation import GatedClient, WorkspaceGate
from bot.slack.workspace import Workspace
from timebot.runtime import Runtime

log = logging.getLogger("timebot.slack")


def web_client(token: str, base_url: str | None, workspace: Workspace | None = None
               ) -> GatedClient:
    """The Web API client, gated by the workspace's installation (bot.slack.installation);
    TIMEBOT_SLACK_API_URL (tests: a local fake) replaces Slack's."""
    client = (GatedClient(token=token, base_url=base_url.rstrip("/") + "/") if base_url
              else GatedClient(token=token))
    client.workspace = workspace
    if workspace is not None:
        workspace.client = client
    return client


def keep_alive(client: AsyncWebClient) -> None:
    """Give the client one aiohttp session, so that its calls reuse kept-alive connections:
    without one, slack_sdk opens a session (a new TCP and TLS connection) per call. Called in
    the running event loop (a session binds to it)."""
    if client.session is None or client.session.closed:
        client.session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=client.timeout))


async def close_keep_alive(client: AsyncWebClient) -> None:
    if client.session is not None:
        await client.session.close()
        client.session = None


def slack_app(
    runtime: Runtime, client: AsyncWebClient, signing_secret: str | None, *, socket_mode: bool,
    workspace: Workspace | None = None, authorize: AsyncAuthorize | None = None,
    oauth_settings: AsyncOAuthSettings | None = None,
    dedup: SlackDeduplication | None = None,
) -> AsyncApp:
    """With `oauth_settings` (SLACK_CLIENT_ID set), the app is authorized by `authorize` (its
    own installation's token) and given the settings explicitly: bolt then never builds its
    own from the environment (a file installation store in $HOME that ignores the token)."""
    if authorize is not None:  # the client's token is what `authorize` answers
        token, client.token = client.token, None
    app = AsyncApp(
        client=client,
        signing_secret=signing_secret,
        # Socket Mode requests are not signed; HTTP ones always are.
        request_verification_enabled=not socket_mode,
        logger=log,
        authorize=authorize,  # type: ignore[arg-type]  # an AsyncAuthorize is taken as is
        oauth_settings=oauth_settings,
    )
    if authorize is not None:
        client.token = token
    if workspace is not None:  # another team's requests, or while uninstalled: not acted on
        app.use(WorkspaceGate(workspace))
    # A retried request (slow ack), also after a restart, is taken once (`dedup`: one for
    # every app of the process).
    app.use(dedup or SlackDeduplication(runtime.state_sessions, runtime.clock,
                                        runtime.read_sessions))
    gate_listeners(app)
    return app
