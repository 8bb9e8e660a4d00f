"""deploy/Dockerfile built (by `make image`, as `make release` builds it) and started with
podman: the image serves /healthz on the port its environment names, its HEALTHCHECK passes,
it runs as the non-root user, GET /graphql is the GraphQL IDE (built into the image, not the
"not built" page), and its OCI labels name the release's version and the commit.

No registry image can be pulled on the test machines, so the Dockerfile's public bases are
replaced (build args) by Debian bookworm built from Debian's packages:
scripts/container_test_bases.sh makes them (.ci/run runs it). Where this machine's container
runtime needs it, the runtime and limits are given explicitly (TIMEBOT_PODMAN_GLOBAL_ARGS,
default `--runtime runc`: crun refuses this machine's hybrid cgroup layout;
TIMEBOT_PODMAN_LIMITS, default `--ulimit nofile=1024:1024 --ulimit nproc=1000:1000`: the
default limits exceed the hard limits here). Slow (a full image
build when the source changed)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from datetime import datetime

import httpx
import pytest

from plumbing.release import VERSION
from tests.deploy.dockerfile import ROOT
from tests.net import free_port

PYTHON_BASE = "localhost/timebot-test-python:bookworm"
NODE_BASE = "localhost/timebot-test-node:bookworm"
IMAGE_NAME = "localhost/timebot-deploy-test"
PODMAN_GLOBAL = shlex.split(os.environ.get("TIMEBOT_PODMAN_GLOBAL_ARGS", "--runtime runc"))
PODMAN_LIMITS = shlex.split(os.environ.get(
    "TIMEBOT_PODMAN_LIMITS", "--ulimit nofile=1024:1024 --ulimit nproc=1000:1000"))


def _podman(*args: str, timeout: float = 120,
            check: bool = True) -> subprocess.CompletedProcess[str]:
    command = ["podman", *PODMAN_GLOBAL, args[0]]
    if args[0] in ("build", "run"):
        command += PODMAN_LIMITS
    completed = subprocess.run([*command, *args[1:]], capture_output=True, text=True,
                               timeout=timeout, check=False)
    if check and completed.returncode != 0:
        raise AssertionError(f"{' '.join(command)} {' '.join(args[1:])}:\n"
                             f"{completed.stdout[-4000:]}{completed.stderr[-4000:]}")
    return completed


def _skip_reason() -> str | None:
    if shutil.which("make") is None:
        return "make not installed"
    if shutil.which("podman") is None:
        return "podman not installed (apt-get install podman buildah runc)"
    if os.geteuid() != 0:
        return "builds with rootful podman"
    for base in (PYTHON_BASE, NODE_BASE):
        if subprocess.run(["podman", "image", "exists", base], check=False).returncode != 0:
            return f"{base} missing: run scripts/container_test_bases.sh"
    return None


pytestmark = [pytest.mark.slow, pytest.mark.skipif(_skip_reason() is not None,
                                                     reason=_skip_reason() or "")]


@pytest.fixture(scope="module")
def image() -> str:
    """Built as `make release` builds it (`make image`: the version's tag and OCI labels)."""
    build_args = ["--network", "host", *PODMAN_LIMITS, "--build-arg", f"PYTHON_IMAGE={PYTHON_BASE}",
                  "--build-arg", f"NODE_IMAGE={NODE_BASE}"]
    built = subprocess.run(
        ["make", "--no-print-directory", "-C", str(ROOT), "image",
         f"IMAGE_TOOL={shlex.join(['podman', *PODMAN_GLOBAL])}", f"IMAGE_NAME={IMAGE_NAME}",
         f"IMAGE_BUILD_ARGS={shlex.join(build_args)}"],
        capture_output=True, text=True, timeout=1800, check=False)
    assert built.returncode == 0, f"make image:\n{built.stdout[-4000:]}{built.stderr[-4000:]}"
    return f"{IMAGE_NAME}:{VERSION}"


@pytest.fixture(scope="module")
def container(image: str) -> Iterator[tuple[str, int]]:
    port = free_port()
    started = _podman("run", "-d", "--network", "host",
                      "-e", f"TIMEBOT_HTTP_PORT={port}", "-e", "TIMEBOT_HTTP_HOST=127.0.0.1",
                      "-e", "TIMEBOT_SMTP_PORT=0", image)
    name = started.stdout.strip()
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            state = _podman("inspect", "-f", "{{.State.Status}}", name).stdout.strip()
            assert state == "running", _podman("logs", name, check=False).stderr[-4000:]
            assert time.monotonic() < deadline, "no /healthz from the container"
            time.sleep(0.5)
        yield name, port
    finally:
        _podman("rm", "-f", "-t", "5", name, check=False)


def test_the_container_serves_the_ide_and_passes_its_healthcheck(
    container: tuple[str, int]
) -> None:
    name, port = container
    page = httpx.get(f"http://127.0.0.1:{port}/graphql", headers={"Accept": "text/html"},
                     timeout=10)
    assert page.status_code == 200
    assert "not been built" not in page.text and "/graphql-ide/graphiql.js" in page.text
    script = httpx.get(f"http://127.0.0.1:{port}/graphql-ide/graphiql.js", timeout=10)
    assert script.status_code == 200 and len(script.content) > 100_000
    # HEALTHCHECK as the image declares it, on the port from the environment (not 8000).
    assert port != 8000
    assert _podman("healthcheck", "run", name, check=False).returncode == 0


def test_the_container_runs_as_the_unprivileged_user(container: tuple[str, int]) -> None:
    name, _ = container
    assert _podman("exec", name, "id", "-u").stdout.strip() == "10001"
    assert _podman("exec", name, "id", "-gn").stdout.strip() == "timebot"
    # Its data directory (secret key, SQLite, outbox) is its own; nothing of the build is left.
    listing = _podman("exec", name, "ls", "-A", "/var/lib/timebot").stdout.split()
    assert "secret.key" in listing
    assert _podman("exec", name, "test", "-e", "/src", check=False).returncode != 0


def test_the_image_is_labelled_with_its_version_and_commit(image: str) -> None:
    labels = json.loads(_podman("image", "inspect", "-f", "{{json .Labels}}", image).stdout)
    assert labels["org.opencontainers.image.title"] == "timebot"
    assert labels["org.opencontainers.image.version"] == VERSION
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    # (`-dirty` where the checkout has uncommitted changes)
    assert labels["org.opencontainers.image.revision"] in (head, f"{head}-dirty")
    created = datetime.fromisoformat(labels["org.opencontainers.image.created"])
    assert created.tzinfo is not None
