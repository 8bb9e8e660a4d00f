"""The deploy folder as a new user meets it: deploy/Dockerfile and .dockerignore, the compose
file, the Kubernetes manifest and the MTA's main.cf, read the way their tools read them, and
the image's command and health check run for real (outside a container: the image itself is
built and started by test_container_image.py where podman can run)."""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from click.testing import CliRunner

from plumbing.release import VERSION
from shell.cli import main as timebot_cli
from tests.deploy.dockerfile import DOCKERFILE, DOCKERIGNORE, ROOT, exec_form, ignored, stages
from tests.net import free_port
from tests.upgrade.releases import RELEASES

COMPOSE = ROOT / "deploy" / "compose.yaml"
KUBERNETES = ROOT / "deploy" / "kubernetes" / "timebot.yaml"
MAIN_CF = ROOT / "deploy" / "mta" / "postfix" / "main.cf"
POSTFIX_MD = ROOT / "deploy" / "mta" / "postfix.md"
DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")


def pinned(image: str, parts: int = 3) -> bool:
    """A digest, or a tag naming an exact release (`3.11.11-slim-bookworm`, not `3.11-slim`;
    PostgreSQL and Debian number their releases with `parts=2`: `15.10`, `12.8`)."""
    if DIGEST.search(image):
        return True
    tag = image.rpartition("/")[2].partition(":")[2]
    return re.match(r"\.".join([r"\d+"] * parts) + r"(?![.\d])", tag) is not None


def final_stage() -> Any:
    return stages(DOCKERFILE.read_text())[1][-1]


def image_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for args in final_stage().all("ENV"):
        for item in shlex.split(args):
            name, _, value = item.partition("=")
            env[name] = value
    return env


def test_every_base_image_is_pinned_to_an_exact_release() -> None:
    _, found = stages(DOCKERFILE.read_text())
    bases = [stage.base for stage in found if stage.base not in {s.name for s in found}]
    assert bases, "no FROM"
    for base in bases:
        assert pinned(base), f"{base} is not pinned to an exact version or digest"


def test_the_image_runs_as_a_non_root_user() -> None:
    users = final_stage().all("USER")
    assert users, "the final stage has no USER"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0"), users
    assert user.isdigit(), "numeric, so that Kubernetes' runAsNonRoot can check it"


def test_the_ide_assets_are_in_place_before_the_wheel_is_built() -> None:
    _, found = stages(DOCKERFILE.read_text())
    ide = next(stage for stage in found if stage.name == "ide")
    assert any("build.mjs" in run for run in ide.all("RUN"))
    build = next(stage for stage in found if stage.name == "build")
    steps = [(key, args) for key, args in build.instructions if key in ("COPY", "RUN")]
    copied = next(index for index, (key, args) in enumerate(steps)
                  if key == "COPY" and "--from=ide" in args and "service/static/graphiql" in args)
    built = next(index for index, (key, args) in enumerate(steps)
                 if key == "RUN" and "pip wheel" in args)
    assert copied < built
    # The build fails rather than ship an image without the IDE.
    assert "graphiql/index.html" in steps[built][1]


def test_the_healthcheck_asks_healthz_on_the_port_from_the_environment() -> None:
    (check,) = final_stage().all("HEALTHCHECK")
    command = check.split(" CMD ", 1)[1]
    assert "TIMEBOT_HTTP_PORT" in command and "/healthz" in command
    assert ":8000/" not in command


@pytest.mark.parametrize("path", [
    "var/secret.key", "var/bot.db", "var/outbox/new/1.eml", ".venv/bin/python", ".git/HEAD",
    "ide/node_modules/graphiql/package.json", "service/static/graphiql/index.html",
    "deploy/.env", ".env", "somewhere/secret.key", "mail/__pycache__/x.pyc",
])
def test_dockerignore_keeps_out(path: str) -> None:
    assert ignored(path, DOCKERIGNORE.read_text()), path


@pytest.mark.parametrize("path", [
    "pyproject.toml", "README.md", "service/graphql/base.graphql", "ide/build.mjs",
    "ide/package-lock.json", "ide/src/index.jsx", "shell/cli.py", "deploy/Dockerfile",
    "service/migrations/env.py",
])
def test_dockerignore_keeps_what_the_build_needs(path: str) -> None:
    assert not ignored(path, DOCKERIGNORE.read_text()), path


def _wait_healthy(port: int, process: subprocess.Popen[bytes], wait_s: float = 60.0) -> None:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        assert process.poll() is None, "timebot serve exited"
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError("timebot serve did not answer /healthz")


def _closed_port() -> int:
    port = free_port()
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0
    return port


def test_the_image_command_serves_and_its_healthcheck_follows_the_port(tmp_path: Path) -> None:
    """CMD and HEALTHCHECK as written, with the image's ENV, on a port that is not 8000."""
    bin_dir = Path(sys.executable).parent
    port = free_port()
    env = {**os.environ, **{k: v for k, v in image_env().items() if k != "PATH"}}
    env.update({
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
        "TIMEBOT_DATA_DIR": str(tmp_path / "data"),
        "TIMEBOT_HTTP_HOST": "127.0.0.1",
        "TIMEBOT_HTTP_PORT": str(port),
        "TIMEBOT_SMTP_PORT": "0",
    })
    env.pop("TIMEBOT_SECRET_KEY", None)
    (cmd,) = final_stage().all("CMD")
    (check,) = final_stage().all("HEALTHCHECK")
    health = exec_form(check.split(" CMD ", 1)[1])
    health[0] = sys.executable if health[0] in ("python", "python3") else health[0]
    process = subprocess.Popen(exec_form(cmd), env=env, cwd=tmp_path,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_healthy(port, process)
        assert subprocess.run(health, env=env, check=False, timeout=30).returncode == 0
        elsewhere = {**env, "TIMEBOT_HTTP_PORT": str(_closed_port())}
        assert subprocess.run(health, env=elsewhere, check=False, timeout=30,
                              capture_output=True).returncode != 0
    finally:
        process.terminate()
        process.wait(30)
    # It made its own secret key in the data directory: the one .dockerignore keeps out.
    assert (tmp_path / "data" / "secret.key").is_file()


def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())  # type: ignore[no-any-return]


def test_compose_secrets_have_no_usable_default() -> None:
    text = COMPOSE.read_text()
    for name in ("TIMEBOT_SECRET_KEY", "POSTGRES_PASSWORD"):
        uses = re.findall(r"\$\{" + name + r"([^}]*)\}", text)
        assert uses, name
        assert all(use.startswith(":?") for use in uses), (name, uses)
    environment = compose()["services"]["timebot"]["environment"]
    assert environment["TIMEBOT_SECRET_KEY"].startswith("${TIMEBOT_SECRET_KEY:?")


def test_compose_runs_postgres_timebot_and_the_mta_delivering_over_lmtp() -> None:
    services = compose()["services"]
    assert set(services) >= {"postgres", "timebot", "mta"}
    assert pinned(services["postgres"]["image"], parts=2)
    timebot = services["timebot"]["environment"]
    assert timebot["TIMEBOT_SMTP_PORT"] == "0" and timebot["TIMEBOT_LMTP_PORT"] == "2424"
    assert timebot["TIMEBOT_DATABASE_URL"].startswith("postgresql+asyncpg://")
    mta = services["mta"]
    mta_address = mta["networks"]["internal"]["ipv4_address"]
    timebot_address = services["timebot"]["networks"]["internal"]["ipv4_address"]
    assert timebot["TIMEBOT_MAIL_TRUSTED_NETWORKS"] == f"{mta_address}/32"
    assert timebot["TIMEBOT_SMTP_RELAY"] == f"smtp://{mta_address}:587"
    assert mta["environment"]["TIMEBOT_LMTP"] == f"{timebot_address}:2424"
    mta_dockerfile = ROOT / "deploy" / mta["build"]["context"] / "Dockerfile"
    (base,) = [stage.base for stage in stages(mta_dockerfile.read_text())[1]]
    assert pinned(base, parts=2), base


@pytest.mark.parametrize("image", ["python:3.11-slim", "postgres:15", "timebot:latest",
                                   "python:3.11-slim@sha256:abc"])
def test_an_unpinned_image_is_told_apart(image: str) -> None:
    assert not pinned(image)


def test_compose_and_kubernetes_run_the_image_of_this_release() -> None:
    """`make release` tags the image `timebot:<VERSION>`: the deploy files name that tag — or,
    between releases (a .dev version), the newest release's."""
    services = compose()["services"]
    (deployment,) = [doc for doc in kubernetes() if doc["kind"] == "Deployment"]
    images = [services["timebot"]["image"], services["mta"]["image"],
              *[container["image"] for container in
                deployment["spec"]["template"]["spec"]["containers"]]]
    newest = VERSION if ".dev" not in VERSION else list(RELEASES)[-1]
    assert {image.rpartition(":")[2] for image in images} == {newest}, images


def test_the_compose_command_is_one_the_cli_accepts() -> None:
    command = compose()["services"]["timebot"]["command"]
    assert command[:2] == ["timebot", "serve"]
    result = CliRunner().invoke(timebot_cli, [*command[1:], "--help"])
    assert result.exit_code == 0, result.output


def kubernetes() -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(KUBERNETES.read_text()) if doc]


def test_kubernetes_runs_lmtp_only_behind_the_mta_and_relays_out() -> None:
    (deployment,) = [doc for doc in kubernetes() if doc["kind"] == "Deployment"]
    (service,) = [doc for doc in kubernetes() if doc["kind"] == "Service"]
    assert deployment["spec"]["replicas"] >= 2  # safe: the migration lock, leased queues
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    env = {item["name"]: item.get("value") for item in container["env"]}
    assert env["TIMEBOT_SMTP_PORT"] == "0"
    assert env["TIMEBOT_LMTP_PORT"]
    assert env["TIMEBOT_SMTP_RELAY"].startswith(("smtp://", "smtps://"))
    assert env["TIMEBOT_MAIL_TRUSTED_AUTHSERV_IDS"]
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    assert "smtp" not in ports and ports["lmtp"] == int(env["TIMEBOT_LMTP_PORT"])
    assert {port["targetPort"] for port in service["spec"]["ports"]} <= set(ports)
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["port"] in ("http", ports["http"])
    assert pinned(container["image"]), container["image"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert "replicas" in KUBERNETES.read_text() and "lock" in KUBERNETES.read_text()


def _main_cf_lines(text: str) -> list[str]:
    return [line for line in text.splitlines()
            if "=" in line and not line.lstrip().startswith("#") and not line.startswith(" ")]


def test_main_cf_and_its_doc_have_no_end_of_line_comments() -> None:
    blocks = re.findall(r"```\n(.*?)```", POSTFIX_MD.read_text(), flags=re.S)
    for text in [MAIN_CF.read_text(), *blocks]:
        for line in _main_cf_lines(text):
            if re.match(r"^[a-z_]+ *=", line):
                assert "#" not in line, line
