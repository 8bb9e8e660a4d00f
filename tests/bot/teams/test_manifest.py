"""deploy/teams/: the app manifest lists the commands the bot answers (bot.teams.chat), for its
own app id, in the personal scope, with the two icons at the sizes Teams requires."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from bot.teams.chat import COMMANDS

DEPLOY = Path(__file__).resolve().parents[3] / "deploy" / "teams"


def test_the_manifest_names_the_app_and_its_commands() -> None:
    manifest = json.loads((DEPLOY / "manifest.json").read_text())
    assert float(manifest["manifestVersion"]) >= 1.16
    assert manifest["id"] == manifest["webApplicationInfo"]["id"] == "${{TEAMS_APP_ID}}"
    (bot,) = manifest["bots"]
    assert bot["botId"] == "${{TEAMS_APP_ID}}" and bot["scopes"] == ["personal"]
    (listed,) = bot["commandLists"]
    assert [(c["title"], c["description"]) for c in listed["commands"]] == [
        (command.title, command.description) for command in COMMANDS]
    assert all(len(c["title"]) <= 32 and len(c["description"]) <= 128
               for c in listed["commands"])
    assert manifest["validDomains"] == ["${{TIMEBOT_PUBLIC_HOST}}"]


def test_the_icons_are_the_sizes_teams_requires() -> None:
    for name, size in (("color.png", 192), ("outline.png", 32)):
        data = (DEPLOY / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
        assert struct.unpack(">II", data[16:24]) == (size, size), name
