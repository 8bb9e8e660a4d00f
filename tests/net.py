"""Loopback helpers for tests."""

from __future__ import annotations

import socket

_handed_out: set[int] = set()


def free_port() -> int:
    """A loopback port that is free now and that this process has not handed out before: once
    the probe socket is closed the kernel may offer the same port again, and a test that asked
    for two ports (HTTP and SMTP) got one port twice."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port not in _handed_out:
            _handed_out.add(port)
            return port
