"""TIMEBOT_MAIL_TRUSTED_NETWORKS: parsing (a bad item is named), the loopback default, and
which SMTP/LMTP peer addresses fall inside (the over-the-wire behaviour is tested in
tests/protocol/test_trusted_mta.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support import TEST_SECRET_KEY
from timebot.config import load_settings
from timebot.errors import ConfigError
from timebot.trusted_networks import parse_networks, peer_in_networks


def settings_with(tmp_path: Path, **env: str) -> Any:
    return load_settings({"TIMEBOT_DATA_DIR": str(tmp_path), "TIMEBOT_SECRET_KEY": TEST_SECRET_KEY,
                          **env})


def test_the_default_is_loopback(tmp_path: Path) -> None:
    networks = settings_with(tmp_path).mail_trusted_networks
    assert [str(n) for n in networks] == ["127.0.0.0/8", "::1/128"]


def test_an_explicit_empty_list_trusts_no_peer(tmp_path: Path) -> None:
    networks = settings_with(tmp_path, TIMEBOT_MAIL_TRUSTED_NETWORKS="").mail_trusted_networks
    assert networks == ()
    assert not peer_in_networks(("127.0.0.1", 25), networks)


@pytest.mark.parametrize("value", ["10.0.0.0/33", "mx.example.com", "10.0.0.0/8,,fe80::/10x"])
def test_a_bad_network_is_refused_naming_the_variable(tmp_path: Path, value: str) -> None:
    with pytest.raises(ConfigError, match=r"^TIMEBOT_MAIL_TRUSTED_NETWORKS: '.*' is not an IP"):
        settings_with(tmp_path, TIMEBOT_MAIL_TRUSTED_NETWORKS=value)


NETWORKS = parse_networks(" 10.0.0.0/8, 192.168.1.7 ,fd00::/8,::1")


@pytest.mark.parametrize(("peer", "inside"), [
    (("10.1.2.3", 40000), True),
    (("192.168.1.7", 25), True),
    (("192.168.1.8", 25), False),
    (("127.0.0.1", 25), False),
    (("::1", 25, 0, 0), True),
    (("fd12::5", 25, 0, 0), True),
    (("fe80::1%eth0", 25, 0, 2), False),
    (("::ffff:10.9.9.9", 25, 0, 0), True),  # IPv4-mapped: a dual-stack listener
    (("::ffff:8.8.8.8", 25, 0, 0), False),
    (("203.0.113.9", 25), False),
    (None, False),
    ("/run/timebot.sock", False),
    (("not-an-address", 25), False),
])
def test_peers_inside_and_outside(peer: Any, inside: bool) -> None:
    assert peer_in_networks(peer, NETWORKS) is inside
