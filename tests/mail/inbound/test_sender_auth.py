"""Sender authentication: Authentication-Results of our MTA, and our own DKIM verification."""

from __future__ import annotations

import base64
from pathlib import Path

import dkim
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from mail.errors import DkimKeyFileError
from mail.inbound.sender_auth import (
    DnsFunc,
    SenderVerdict,
    aligned,
    authenticate_sender,
    check_authentication_results,
    parse_authentication_results,
    parse_txt_file,
    txt_file_dnsfunc,
)
from mail.reading.message import read_message

TRUSTED = ["mx.timebot.example"]

BODY = "approve\r\n\r\nOn Mon, Jan 5, 2026 at 10:00 AM Timebot wrote:\r\n> Reply approve\r\n"


def message(
    *extra_headers: str, sender: str = "Anna <anna@example.com>", body: str = BODY
) -> bytes:
    head = "".join(f"{line}\r\n" for line in extra_headers)
    return (
        f"{head}From: {sender}\r\nTo: approvals+x@timebot.localhost\r\n"
        "Subject: Re: Timesheet\r\nDate: Mon, 05 Jan 2026 11:00:00 +0100\r\n"
        "Message-ID: <m1@example.com>\r\nMIME-Version: 1.0\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n\r\n" + body
    ).encode()


def verdict_of(
    raw: bytes, trusted: list[str] | None = None, dns: DnsFunc | None = None
) -> SenderVerdict:
    return authenticate_sender(
        raw,
        read_message(raw),
        trusted_authserv_ids=TRUSTED if trusted is None else trusted,
        dnsfunc=dns if dns is not None else _no_dns,
    )


def _no_dns(name: bytes, timeout: float = 5) -> bytes | None:
    return None


# --- alignment --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("signer", "author", "expected"),
    [
        ("example.com", "example.com", True),
        ("Example.COM.", "example.com", True),
        ("example.com", "mail.example.com", True),
        ("mail.example.com", "example.com", True),
        ("example.com", "badexample.com", False),
        ("evil.example", "example.com", False),
        ("com", "example.com", False),
        ("", "example.com", False),
    ],
)
def test_alignment(signer: str, author: str, expected: bool) -> None:
    assert aligned(signer, author) is expected


# --- Authentication-Results ---------------------------------------------------------------------


def test_parse_authentication_results_with_comments_and_quotes() -> None:
    authserv, results = parse_authentication_results(
        'MX.Timebot.Example 1; dkim=pass (2048-bit key; unprotected) header.d=example.com '
        'header.i=@example.com header.b="abc;def"; spf=pass (sender IP is 192.0.2.1) '
        "smtp.mailfrom=anna@example.com; dmarc=pass (p=REJECT) header.from=example.com"
    )
    assert authserv == "mx.timebot.example"
    assert [(r.method, r.result) for r in results] == [
        ("dkim", "pass"), ("spf", "pass"), ("dmarc", "pass"),
    ]  # fmt: skip
    assert results[0].properties["header.d"] == "example.com"
    assert results[0].properties["header.b"] == "abc;def"
    assert results[2].properties["header.from"] == "example.com"


def test_trusted_dmarc_pass() -> None:
    raw = message(
        "Authentication-Results: mx.timebot.example; dmarc=pass header.from=example.com"
    )
    verdict = verdict_of(raw)
    assert verdict.authenticated and verdict.method == "dmarc"


def test_untrusted_authserv_id() -> None:
    raw = message("Authentication-Results: mx.evil.example; dmarc=pass header.from=example.com")
    verdict = verdict_of(raw)
    assert not verdict.authenticated
    assert "untrusted" in verdict.reason


def test_no_trusted_ids_configured_ignores_the_header() -> None:
    raw = message("Authentication-Results: mx.timebot.example; dmarc=pass")
    assert not verdict_of(raw, trusted=[]).authenticated


def test_forged_lower_header_is_ignored() -> None:
    raw = message(
        "Authentication-Results: mx.timebot.example; dkim=none; spf=fail; dmarc=fail "
        "header.from=example.com",
        "Received: from attacker (attacker.example [198.51.100.7]) by mx.timebot.example",
        "Authentication-Results: mx.timebot.example; dmarc=pass header.from=example.com; "
        "dkim=pass header.d=example.com",
    )
    verdict = verdict_of(raw)
    assert not verdict.authenticated
    assert "dmarc=fail" in verdict.reason


def test_forged_lower_header_with_untrusted_top() -> None:
    raw = message(
        "Authentication-Results: relay.other.example; dkim=pass header.d=example.com",
        "Authentication-Results: mx.timebot.example; dmarc=pass header.from=example.com",
    )
    assert not verdict_of(raw).authenticated


def test_dkim_pass_aligned_and_not() -> None:
    aligned_raw = message(
        "Authentication-Results: mx.timebot.example; dkim=pass header.d=mail.example.com"
    )
    verdict = verdict_of(aligned_raw)
    assert verdict.authenticated and verdict.method == "dkim"
    other = message(
        "Authentication-Results: mx.timebot.example; dkim=pass header.d=mailer.evil.example; "
        "dmarc=none"
    )
    assert not verdict_of(other).authenticated
    by_identity = message(
        "Authentication-Results: mx.timebot.example; dkim=pass header.i=@example.com"
    )
    assert verdict_of(by_identity).authenticated


MX = "Authentication-Results: mx.timebot.example; "
OURS = "Received: from mail.example.com (mail.example.com [192.0.2.5]) by mx.timebot.example"
MILTERS = [
    # (what, headers on top of the message, authenticated, method)
    ("OpenDMARC's none above OpenDKIM's aligned pass",
     [MX + "dmarc=none (p=none dis=none) header.from=example.com",
      MX + "dkim=pass (2048-bit key) header.d=example.com header.i=@example.com", OURS],
     True, "dkim"),
    ("no DMARC result, a subdomain's pass in the second header",
     [MX + "spf=pass smtp.mailfrom=example.com", MX + "dkim=pass header.d=mail.example.com",
      OURS], True, "dkim"),
    ("dmarc=temperror and an aligned pass",
     [MX + "dmarc=temperror header.from=example.com", MX + "dkim=pass header.d=example.com"],
     True, "dkim"),
    ("dmarc=pass in the second header",
     [MX + "dkim=pass header.d=example.com", MX + "dmarc=pass header.from=example.com", OURS],
     True, "dmarc"),
    ("another milter's header between ours",
     [MX + "dmarc=none header.from=example.com", "X-Spam-Status: No, score=-0.1",
      MX + "dkim=pass header.d=example.com", OURS], True, "dkim"),
    ("a re-injection's Received above ours",
     ["Received: from localhost by mx.timebot.example (amavis re-injection)",
      MX + "dmarc=none header.from=example.com", MX + "dkim=pass header.d=example.com", OURS],
     True, "dkim"),
    ("dmarc=fail is never overridden by a pass below",
     [MX + "dmarc=fail (p=reject) header.from=example.com", MX + "dkim=pass header.d=example.com",
      OURS], False, None),
    ("none above an unaligned pass",
     [MX + "dmarc=none header.from=example.com", MX + "dkim=pass header.d=mailer.evil.example",
      OURS], False, None),
    ("none above a failed signature",
     [MX + "dmarc=none header.from=example.com", MX + "dkim=fail header.d=example.com", OURS],
     False, None),
    ("a forged pass below our Received line",
     [MX + "dmarc=none header.from=example.com", MX + "dkim=none", OURS,
      MX + "dkim=pass header.d=example.com; dmarc=pass header.from=example.com"], False, None),
    ("a pass below another authserv-id's header",
     [MX + "dmarc=none header.from=example.com",
      "Authentication-Results: relay.other.example; dkim=pass header.d=example.com",
      MX + "dkim=pass header.d=example.com"], False, None),
    ("an untrusted header on top",
     ["Authentication-Results: relay.other.example; dmarc=none",
      MX + "dkim=pass header.d=example.com"], False, None),
]


@pytest.mark.parametrize(("what", "headers", "authenticated", "method"), MILTERS,
                         ids=[case[0] for case in MILTERS])
def test_every_header_our_milters_added_counts(
    what: str, headers: list[str], authenticated: bool, method: str | None
) -> None:
    verdict = verdict_of(message(*headers))
    assert (verdict.authenticated, verdict.method) == (authenticated, method), verdict.reason


def test_dmarc_pass_for_another_from_domain() -> None:
    raw = message("Authentication-Results: mx.timebot.example; dmarc=pass header.from=evil.example")
    assert not verdict_of(raw).authenticated


def test_two_from_addresses_are_never_authenticated() -> None:
    raw = message(
        "Authentication-Results: mx.timebot.example; dmarc=pass header.from=example.com",
        sender="anna@example.com, mallory@evil.example",
    )
    verdict = verdict_of(raw)
    assert not verdict.authenticated
    assert "From" in verdict.reason


def test_check_authentication_results_without_header() -> None:
    verdict = check_authentication_results([("From", "a@example.com")], "example.com", TRUSTED)
    assert not verdict.authenticated
    assert verdict.reason == "no Authentication-Results header"


# --- our own DKIM verification ------------------------------------------------------------------


class Signer:
    def __init__(self, domain: str, selector: str = "sel1") -> None:
        key = rsa.generate_private_key(public_exponent=65537, key_size=1024)
        self.private = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
        public = key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        self.domain, self.selector = domain, selector
        self.txt = f"v=DKIM1; k=rsa; p={base64.b64encode(public).decode()}"

    def line(self) -> str:
        """A TIMEBOT_DKIM_TXT_FILE line, the value split into quoted strings as in a zone."""
        half = len(self.txt) // 2
        return (
            f'{self.selector}._domainkey.{self.domain} "{self.txt[:half]}" "{self.txt[half:]}"'
        )

    def sign(self, raw: bytes, *, length: bool = False) -> bytes:
        signature: bytes = dkim.sign(
            raw, self.selector.encode(), self.domain.encode(), self.private, length=length
        )
        return signature + raw


@pytest.fixture(scope="module")
def example_signer() -> Signer:
    return Signer("example.com")


@pytest.fixture(scope="module")
def evil_signer() -> Signer:
    return Signer("evil.example", "s2024")


@pytest.fixture(scope="module")
def key_file(
    tmp_path_factory: pytest.TempPathFactory, example_signer: Signer, evil_signer: Signer
) -> Path:
    path = tmp_path_factory.mktemp("dkim") / "keys.txt"
    path.write_text(
        "# selector._domainkey.domain TXT\n\n"
        + example_signer.line() + "\n"
        + f"{evil_signer.selector}._domainkey.{evil_signer.domain}. IN TXT {evil_signer.txt}\n"
    )
    return path


def test_real_signature_verified_through_the_txt_file(
    example_signer: Signer, key_file: Path
) -> None:
    raw = example_signer.sign(message())
    verdict = verdict_of(raw, trusted=[], dns=txt_file_dnsfunc(key_file))
    assert verdict.authenticated, verdict.reason
    assert verdict.method == "dkim-verified"
    assert verdict.domain == "example.com"


def test_subdomain_sender_is_aligned(example_signer: Signer, key_file: Path) -> None:
    raw = example_signer.sign(message(sender="Anna <anna@eu.example.com>"))
    assert verdict_of(raw, trusted=[], dns=txt_file_dnsfunc(key_file)).authenticated


def test_modified_body_fails(example_signer: Signer, key_file: Path) -> None:
    raw = example_signer.sign(message(body="reject: wrong\r\n"))
    forged = raw.replace(b"reject: wrong", b"approve")
    verdict = verdict_of(forged, trusted=[], dns=txt_file_dnsfunc(key_file))
    assert not verdict.authenticated


def test_signature_of_another_domain(evil_signer: Signer, key_file: Path) -> None:
    raw = evil_signer.sign(message())  # valid, but for evil.example while From is example.com
    assert dkim.verify(raw, dnsfunc=txt_file_dnsfunc(key_file))  # genuinely valid...
    verdict = verdict_of(raw, trusted=[], dns=txt_file_dnsfunc(key_file))
    assert not verdict.authenticated  # ...but not aligned
    assert "not aligned" in verdict.reason


def test_unknown_key_fails(key_file: Path) -> None:
    stranger = Signer("example.com", "unknown")
    raw = stranger.sign(message())
    assert not verdict_of(raw, trusted=[], dns=txt_file_dnsfunc(key_file)).authenticated


def test_length_tag_with_appended_text_is_refused(example_signer: Signer, key_file: Path) -> None:
    signed = example_signer.sign(message(body="Please see the review.\r\n"), length=True)
    assert b" l=" in signed
    dns = txt_file_dnsfunc(key_file)
    # as signed, l= covers the whole body: accepted
    assert verdict_of(signed, trusted=[], dns=dns).authenticated
    # someone prepends nothing but appends a decision after the signed length
    appended = signed + b"\r\napprove\r\n"
    assert dkim.verify(appended, dnsfunc=dns)  # dkimpy alone would say yes
    verdict = verdict_of(appended, trusted=[], dns=dns)
    assert not verdict.authenticated
    assert "l=" in verdict.reason


def test_from_must_be_signed(key_file: Path) -> None:
    # dkimpy refuses to make such a signature, so this one is written by hand
    raw = message(
        "DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/simple; d=example.com; s=sel1; "
        "h=subject:date:message-id; bh=AAAA; b=AAAA"
    )
    verdict = verdict_of(raw, trusted=[], dns=txt_file_dnsfunc(key_file))
    assert not verdict.authenticated
    assert "From header is not signed" in verdict.reason


def test_unsigned_message() -> None:
    verdict = verdict_of(message(), trusted=[])
    assert not verdict.authenticated
    assert "no DKIM signature" in verdict.reason


def test_txt_file_errors(tmp_path: Path) -> None:
    with pytest.raises(DkimKeyFileError):
        txt_file_dnsfunc(tmp_path / "missing.txt")
    with pytest.raises(DkimKeyFileError):
        parse_txt_file("only-a-name\n")
    records = parse_txt_file('A._domainkey.Example.COM. "v=DKIM1; " "p=abc"\n')
    assert records == {"a._domainkey.example.com": b"v=DKIM1; p=abc"}
    lookup = txt_file_dnsfunc(_write(tmp_path / "k.txt", 'a._domainkey.example.com v=DKIM1; p=x'))
    assert lookup(b"A._domainkey.example.com.") == b"v=DKIM1; p=x"
    assert lookup(b"b._domainkey.example.com.") is None


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path
