"""A weak or placeholder TIMEBOT_SECRET_KEY is refused, by config loading and by `timebot serve`
(a subprocess, as an operator starts it); the generated key stays the default; the deploy files
give no secret a usable default."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support import TEST_SECRET_KEY
from tests.timebot.test_cli import cli_env, timebot
from timebot.config import load_settings
from timebot.errors import ConfigError

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"

WEAK = [
    ("change-me-to-a-long-random-string", "placeholder"),  # the old compose file's value
    ("CHANGE_ME_PLEASE_THIS_IS_LONG_ENOUGH_NOW", "placeholder"),
    ("replace-me-with-something-really-random!", "placeholder"),
    ("my-secret-key-for-the-timebot-production", "placeholder"),
    ("test-secret-key", "too short"),  # what the tests used to run with
    ("x" * 31, "too short"),
    ("é" * 15, "too short"),  # 30 bytes
    ("ab" * 32, "distinct characters"),
    ("0" * 64, "distinct characters"),
    ("  ", "too short"),
]


@pytest.mark.parametrize(("value", "why"), WEAK)
def test_weak_keys_are_refused_naming_the_variable(
    tmp_path: Path, value: str, why: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        load_settings({"TIMEBOT_DATA_DIR": str(tmp_path), "TIMEBOT_SECRET_KEY": value})
    message = str(raised.value)
    assert message.startswith("TIMEBOT_SECRET_KEY "), message
    assert why in message and "secrets.token_urlsafe" in message
    assert not (tmp_path / "secret.key").exists()


def test_a_weak_key_in_the_toml_file_is_refused_too(tmp_path: Path) -> None:
    config = tmp_path / "timebot.toml"
    config.write_text('secret_key = "change-me-to-a-long-random-string"\n')
    with pytest.raises(ConfigError, match="TIMEBOT_SECRET_KEY looks like a placeholder"):
        load_settings({"TIMEBOT_DATA_DIR": str(tmp_path), "TIMEBOT_CONFIG": str(config)})


def test_a_strong_key_is_used_as_given(tmp_path: Path) -> None:
    settings = load_settings({"TIMEBOT_DATA_DIR": str(tmp_path),
                              "TIMEBOT_SECRET_KEY": TEST_SECRET_KEY})
    assert settings.secret_key == TEST_SECRET_KEY
    assert not (tmp_path / "secret.key").exists()


def test_unset_the_generated_key_is_the_default_and_stays(tmp_path: Path) -> None:
    first = load_settings({"TIMEBOT_DATA_DIR": str(tmp_path)})
    again = load_settings({"TIMEBOT_DATA_DIR": str(tmp_path), "TIMEBOT_SECRET_KEY": ""})
    assert first.secret_key == again.secret_key == (tmp_path / "secret.key").read_text()
    assert len(first.secret_key) >= 32
    assert (tmp_path / "secret.key").stat().st_mode & 0o077 == 0


async def test_serve_refuses_to_start_with_the_compose_placeholder(tmp_path: Path) -> None:
    env = cli_env(tmp_path / "data", TIMEBOT_SECRET_KEY="change-me-to-a-long-random-string",
                  TIMEBOT_HTTP_PORT="9")
    run = await timebot(env, "serve")
    assert run.code == 1, (run.out, run.err)
    assert "Traceback" not in run.err
    assert "TIMEBOT_SECRET_KEY looks like a placeholder" in run.err, run.err
    assert not (tmp_path / "data" / "service.db").exists(), "nothing started"


async def test_serve_refuses_a_short_key(tmp_path: Path) -> None:
    env = cli_env(tmp_path / "data", TIMEBOT_SECRET_KEY="test-secret-key")
    run = await timebot(env, "serve")
    assert run.code == 1 and "TIMEBOT_SECRET_KEY is too short (15 bytes" in run.err, run.err


async def test_other_commands_refuse_it_too_but_help_works(tmp_path: Path) -> None:
    env = cli_env(tmp_path / "data", TIMEBOT_SECRET_KEY="changeme")
    refused = await timebot(env, "service", "init", "--org", "Acme", "--admin-name", "Ann",
                            "--admin-email", "ann@acme.example")
    assert refused.code == 1 and "TIMEBOT_SECRET_KEY" in refused.err
    assert (await timebot(env, "--help")).code == 0


def test_no_secret_in_the_deploy_files_has_a_usable_default() -> None:
    compose = (DEPLOY / "compose.yaml").read_text()
    assert "change-me" not in compose
    assert re.search(r"TIMEBOT_SECRET_KEY: \$\{TIMEBOT_SECRET_KEY:\?", compose)
    assert re.search(r"POSTGRES_PASSWORD: \$\{POSTGRES_PASSWORD:\?", compose)
    assert "timebot:timebot@" not in compose
    for path in DEPLOY.rglob("*"):
        if path.is_file():
            assert b"change-me" not in path.read_bytes().lower(), path  # icons too
