"""The loop guard over two corpora written for it (mail.reading.machine_signs says where each sign
comes from):

- tests/mail/machine_corpus: mail written by machines (list managers, no-reply senders,
  carrier bounces, abuse reports in RFC 5965 and older formats, auto-replies): each refused,
  with its kind, although its envelope sender is NOT the null sender (carriers bounce with a
  real one, and auto-replies always have one);
- tests/mail/human_corpus: mail people write that looks a little like a machine's (`john.request@`,
  `it-admin@`, X-Auto-Response-Suppress, X-AntiAbuse, a time@ subject "Auto: Werkstatt 2h"):
  none refused.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from mail.inbound.loop_guard import why_not_act
from mail.reading.message import read_message

HERE = Path(__file__).parents[1]
MACHINE = HERE / "machine_corpus"
HUMAN = HERE / "human_corpus"
DOMAIN = "timebot.localhost"


def _expected(folder: Path) -> dict[str, dict[str, Any]]:
    return tomllib.loads((folder / "expected.toml").read_text(encoding="utf-8"))


MACHINE_EXPECTED = _expected(MACHINE)
HUMAN_EXPECTED = _expected(HUMAN)


def test_the_corpora_are_complete() -> None:
    for folder, expected, least in ((MACHINE, MACHINE_EXPECTED, 40), (HUMAN, HUMAN_EXPECTED, 15)):
        files = {path.stem for path in folder.glob("*.eml")}
        assert files == set(expected), f"{folder.name}: every .eml has a table and the reverse"
        assert len(files) >= least
    kinds = {entry["kind"] for entry in MACHINE_EXPECTED.values()}
    assert kinds == {"bounce", "abuse-report", "auto-reply", "no-reply", "list"}


@pytest.mark.parametrize("name", sorted(MACHINE_EXPECTED))
def test_machine_mail_is_refused(name: str) -> None:
    expected = MACHINE_EXPECTED[name]
    assert expected["envelope"], "never the null sender: that alone would refuse it"
    message = read_message((MACHINE / f"{name}.eml").read_bytes())
    refusal = why_not_act(message, own_addresses=[f"timebot@{DOMAIN}"], mail_domain=DOMAIN,
                          envelope_sender=expected["envelope"])
    assert refusal is not None, f"{name} was taken for a person's mail"
    assert refusal.kind == expected["kind"], refusal
    # Over IMAP there is no envelope: the message alone decides the same.
    alone = why_not_act(message, own_addresses=[f"timebot@{DOMAIN}"], mail_domain=DOMAIN)
    assert alone is not None and alone.kind == expected["kind"], alone


@pytest.mark.parametrize("name", sorted(HUMAN_EXPECTED))
def test_human_mail_is_not_refused(name: str) -> None:
    message = read_message((HUMAN / f"{name}.eml").read_bytes())
    assert message.from_address is not None
    refusal = why_not_act(message, own_addresses=[f"timebot@{DOMAIN}"], mail_domain=DOMAIN,
                          envelope_sender=message.from_address)
    assert refusal is None, f"{name} ({HUMAN_EXPECTED[name]['why']}) refused: {refusal}"
