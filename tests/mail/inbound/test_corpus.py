"""Every message of tests/mail/corpus through read -> loop_guard -> decide (and the token).

tests/mail/corpus/expected.toml holds each message's expected outcome."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from mail.inbound.loop_guard import why_not_act
from mail.reading.decide import Approve, Comment, Reject, RejectWithoutReason, decide
from mail.reading.message import read_message
from timebot.secret_key.tokens import TokenMissing, resolve_reply_token

CORPUS = Path(__file__).parents[1] / "corpus"
EXPECTED: dict[str, dict[str, Any]] = tomllib.loads(
    (CORPUS / "expected.toml").read_text(encoding="utf-8")
)
SECRET = "corpus-secret"
DOMAIN = "timebot.localhost"
NOW_MS = 1_767_607_200_000  # 2026-01-05
EVENT = "65a1f0c2d4e5f60718293a4b"
APPROVER = "65a1f0c2d4e5f60718293a4c"


def test_corpus_is_complete() -> None:
    files = {path.stem for path in CORPUS.glob("*.eml")}
    assert files == set(EXPECTED), "every .eml has an expectation and the reverse"
    assert len(files) >= 60


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_message(name: str) -> None:
    expected = EXPECTED[name]
    raw = (CORPUS / f"{name}.eml").read_bytes()
    message = read_message(raw)
    refusal = why_not_act(
        message, own_addresses=[f"timebot@{DOMAIN}"], mail_domain=DOMAIN
    )
    outcome = expected["outcome"]
    if outcome == "refused":
        assert refusal is not None, f"{name} must be refused"
        assert refusal.kind == expected["refusal"], refusal
        return
    assert refusal is None, f"{name} refused: {refusal}"
    assert message.from_address is not None

    if expected.get("token", True):
        token = resolve_reply_token(
            message.headers, secret_key=SECRET, mail_domain=DOMAIN, now_ms=NOW_MS
        )
        assert (token.event_id, token.approver_id, token.stage) == (EVENT, APPROVER, 1)
    else:
        with pytest.raises(TokenMissing):
            resolve_reply_token(
                message.headers, secret_key=SECRET, mail_domain=DOMAIN, now_ms=NOW_MS
            )

    decision = decide(message.text)
    if outcome == "any":
        return
    if outcome == "approve":
        assert isinstance(decision, Approve), decision
        assert decision.comment == expected.get("comment", "")
    elif outcome == "reject":
        assert decision == Reject(expected["reason"])
    elif outcome == "reject-without-reason":
        assert isinstance(decision, RejectWithoutReason), decision
    elif outcome == "comment":
        assert decision == Comment(expected["comment"])
    else:
        pytest.fail(f"unknown outcome {outcome!r}")
