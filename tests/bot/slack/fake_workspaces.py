"""The fake Slack's workspaces installed through OAuth: teams, the tokens `oauth.v2.access`
gives out for the codes of the authorize page, `auth.test` answering a token's team, revoked
teams, and who each token sees (a team's users; the one-workspace token: the others).

    fake.add_team("T0A", "Acme")                  # a workspace; its installs' tokens answer it
    code = fake.install_code("T0A")               # what Slack's authorize page hands back …
    # … or GET {base_url}/oauth/v2/authorize?state=…&redirect_uri=… after `fake.approve("T0A")`
    # redirects to redirect_uri?code=…&state=… as Slack does; `oauth.v2.access` swaps a code
    # (once) for a fresh bot token of that team: `fake.token_of("T0A")`
    fake.revoke("T0A")                            # that team's tokens refused (token_revoked)
    fake.add_enterprise("E0G", "Grid", ["T0G1", "T0G2"])   # Enterprise Grid: an approve of
    # "E0G" is an org-wide install, whose token sees the users of every team of it
    fake.rotation["T0A"] = (1800, 43200)          # token rotation: the install's token lasts
    # 1800 s, each one refreshed (grant_type=refresh_token) 43200 s
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import Callable
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import Response


class _Call(Protocol):
    method: str


class _User(Protocol):
    team: str | None


class FakeWorkspaces:
    """Mixed into FakeSlack, whose fields these are."""

    teams: dict[str, str]
    tokens: dict[str, str]
    codes: dict[str, str]
    revoked: set[str]
    approving: list[str]
    rotation: dict[str, tuple[int, int]]
    enterprise_of: dict[str, str]
    refresh_tokens: dict[str, str]
    _ts: itertools.count[int]
    clock: Callable[[], float]

    async def _record(self, call: Any) -> None:
        raise NotImplementedError

    def _new_call(self, method: str, args: dict[str, Any]) -> Any:
        raise NotImplementedError

    def add_team(self, team_id: str, name: str) -> None:
        self.teams[team_id] = name

    def add_enterprise(self, enterprise_id: str, name: str, teams: list[str]) -> None:
        self.teams[enterprise_id] = name
        for team in teams:
            self.enterprise_of[team] = enterprise_id

    def install_code(self, team_id: str) -> str:
        code = f"code-{team_id}-{next(self._ts)}"
        self.codes[code] = team_id
        return code

    def approve(self, team_id: str) -> None:
        """The next visit of the authorize page installs into `team_id`."""
        self.approving.append(team_id)

    def token_of(self, team_id: str) -> str:
        """The newest bot token given to `team_id`."""
        return [token for token, team in self.tokens.items() if team == team_id][-1]

    def revoke(self, team_id: str) -> None:
        self.revoked.add(team_id)

    def _workspace_answer(self, method: str, args: dict[str, Any], request: Request,
                          team: str | None) -> dict[str, Any]:
        if method == "oauth.v2.access":  # the app's credentials: Basic auth, or in the args
            basic = request.headers.get("authorization", "")
            if basic.startswith("Basic "):
                pair = base64.b64decode(basic.removeprefix("Basic ")).decode().split(":", 1)
                args = {**args, "client_id": pair[0], "client_secret": pair[-1]}
            return self._oauth_access(args)
        assert team is not None
        grid = team in self.enterprise_of.values()
        return {"ok": True, "url": f"https://{team.lower()}.slack.com/", "team": self.teams[team],
                "user": "timebot", "team_id": "" if grid else team, "user_id": f"UBOT{team}",
                "bot_id": f"B{team}", "is_enterprise_install": grid,
                **({"enterprise_id": team} if grid else {})}

    def _oauth_access(self, args: dict[str, Any]) -> dict[str, Any]:
        refreshing = args.get("grant_type") == "refresh_token"
        team = (self.refresh_tokens.get(str(args.get("refresh_token") or "")) if refreshing
                else self.codes.pop(str(args.get("code") or ""), None))
        if team is None or not args.get("client_id") or not args.get("client_secret"):
            return {"ok": False, "error": "invalid_refresh_token" if refreshing
                    else "invalid_code"}
        token = f"xoxb-{team}-{next(self._ts)}"
        self.tokens[token] = team
        self.revoked.discard(team)
        answer: dict[str, Any] = {
            "ok": True, "app_id": "A0TIMEBOT", "access_token": token, "token_type": "bot",
            "scope": "chat:write,commands,im:history,users:read,users:read.email",
            "bot_user_id": f"UBOT{team}", "team": {"id": team, "name": self.teams[team]},
            "enterprise": None, "is_enterprise_install": False,
            "authed_user": {"id": f"UADMIN{team}"}}
        if team in self.enterprise_of.values():  # an org-wide install
            answer.update(team=None, is_enterprise_install=True,
                          enterprise={"id": team, "name": self.teams[team]})
        if team in self.rotation:
            refresh = f"xoxe-1-{team}-{next(self._ts)}"
            self.refresh_tokens[refresh] = team
            answer["refresh_token"] = refresh
            answer["expires_in"] = self.rotation[team][1 if refreshing else 0]
        return answer

    async def _authorize(self, request: Request) -> Response:
        """Slack's authorize page: the user approves (`approve`), back to the redirect URI."""
        args = dict(request.query_params)
        await self._record(self._new_call("oauth/v2/authorize", args))
        if not self.approving:
            return Response("nobody approves", status_code=400)
        code = self.install_code(self.approving.pop(0))
        target = f"{args.get('redirect_uri', '')}?code={code}&state={args.get('state', '')}"
        return Response(status_code=302, headers={"location": target})

    def _sees(self, user: _User, team: str | None) -> bool:
        """A team's token sees its own users only; the one-workspace token sees the others."""
        return user.team == team or (
            user.team is not None and self.enterprise_of.get(user.team) == team)
