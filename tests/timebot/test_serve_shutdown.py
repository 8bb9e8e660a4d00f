"""`timebot serve` stopped as systemd and Kubernetes stop it: SIGTERM drains and the process
exits 0, with one worker (uvicorn in the process itself) as with several (the supervisor)."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import httpx
import pytest

from tests.net import free_port
from tests.timebot.serve_process import serve_env, serving

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("workers", ["1", "2"])
async def test_sigterm_drains_and_exits_0(tmp_path: Path, workers: str) -> None:
    env = serve_env(tmp_path / "data", TIMEBOT_HTTP_PORT=str(free_port()),
                    TIMEBOT_SMTP_PORT="0")
    async with serving(env, "--workers", workers, cwd=tmp_path) as served:
        async with httpx.AsyncClient(base_url=served.base, timeout=30) as client:
            assert (await client.get("/healthz")).status_code == 200
        served.process.send_signal(signal.SIGTERM)
        returncode = await asyncio.wait_for(served.process.wait(), timeout=60)
    output = "".join(served.out + served.err)
    assert returncode == 0, output
    assert "draining" in output, output
