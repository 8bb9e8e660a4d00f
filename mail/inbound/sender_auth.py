"""Is the sender of a reply authenticated as its From address?

`authenticate_sender(raw, message, trusted_authserv_ids=…, dnsfunc=…)` returns a SenderVerdict
(authenticated or not, how, and why). It passes when either

1. the Authentication-Results headers (RFC 8601) our own MTA added — the consecutive topmost
   ones with an authserv-id in TIMEBOT_MAIL_TRUSTED_AUTHSERV_IDS, above our MTA's Received
   line (each milter adds its own: OpenDMARC's `dmarc=none` lands above OpenDKIM's
   `dkim=pass`) — say `dmarc=pass` (for the From domain, when it names `header.from`), or,
   unless DMARC failed, `dkim=pass` with a `header.d` (or `header.i`) aligned with the From
   domain (many domains publish no DMARC record: `dmarc=none`). An attacker can put any
   Authentication-Results into the message they send; those end up *below* ours and below
   our MTA's Received line, and are never read. If the topmost one is not from a trusted
   authserv-id, no Authentication-Results counts at all. (So with no MTA in front of timebot,
   leave the trusted list empty; and the MTA should remove incoming headers that carry its
   authserv-id, as RFC 8601 §5 asks.) The caller honours these headers only for mail that
   came from the trusted MTA (TIMEBOT_MAIL_TRUSTED_NETWORKS; see mail/inbound/process.py).
2. or a DKIM-Signature that we verify ourselves (dkimpy; keys through DNS with dnspython, or
   from TIMEBOT_DKIM_TXT_FILE via `txt_file_dnsfunc`) with a `d=` aligned with the From
   domain. A signature with `l=` shorter than the body does not cover what was appended
   after the signed length (a forged "approve" above a genuine signed body would pass
   otherwise): such a signature is refused.

Alignment is the relaxed, organizational-domain alignment of DMARC approximated without a
public-suffix list: the signing domain equals the From domain, or one is a subdomain of the
other, and the signing domain has at least two labels.

A message with no single From address is never authenticated.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import dkim
from dkim.canonicalization import CanonicalizationPolicy, InvalidCanonicalizationPolicyError
from dkim.util import InvalidTagValueList, parse_tag_value

from mail.errors import DkimKeyFileError
from mail.reading.message import ReadMessage

__all__ = [
    "AuthResult",
    "DnsFunc",
    "SenderVerdict",
    "aligned",
    "authenticate_sender",
    "check_authentication_results",
    "check_dkim",
    "our_authentication_results",
    "parse_authentication_results",
    "txt_file_dnsfunc",
]

DnsFunc = Callable[..., bytes | None]  # dkimpy's dnsfunc(name: bytes, timeout=5)


@dataclass(frozen=True)
class SenderVerdict:
    authenticated: bool
    method: str | None  # "dmarc" | "dkim" (from Authentication-Results) | "dkim-verified"
    domain: str | None  # the domain that vouched for the sender
    reason: str  # human-readable, for logs and for the refusal receipt


# --- alignment -----------------------------------------------------------------------------


def _domain(value: str) -> str:
    return value.strip().strip(".").lower()


def aligned(signing_domain: str, from_domain: str) -> bool:
    """Relaxed alignment: same domain, or one a subdomain of the other (see module doc)."""
    signer, author = _domain(signing_domain), _domain(from_domain)
    if not signer or not author or "." not in signer:
        return False
    return signer == author or author.endswith("." + signer) or signer.endswith("." + author)


# --- Authentication-Results ----------------------------------------------------------------


@dataclass(frozen=True)
class AuthResult:
    method: str  # "dkim", "dmarc", "spf", …
    result: str  # "pass", "fail", …
    properties: dict[str, str]  # "header.d" -> "example.com", "reason" -> "…"


def _strip_comments(value: str) -> str:
    out: list[str] = []
    depth = 0
    quoted = False
    escaped = False
    for char in value:
        if escaped:
            escaped = False
            if depth == 0:
                out.append(char)
            continue
        if char == "\\":
            escaped = True
            if depth == 0:
                out.append(char)
            continue
        if quoted:
            out.append(char)
            if char == '"':
                quoted = False
            continue
        if char == '"' and depth == 0:
            quoted = True
            out.append(char)
        elif char == "(":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        elif depth == 0:
            out.append(char)
    return "".join(out)


def _split_semicolons(value: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    for char in value:
        if char == '"':
            quoted = not quoted
        if char == ";" and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [part.strip() for part in parts]


_PAIR = re.compile(r'([A-Za-z0-9_.\-/]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s;]+)')


def parse_authentication_results(value: str) -> tuple[str, list[AuthResult]]:
    """(authserv-id lower-cased, results) of one Authentication-Results header value."""
    parts = _split_semicolons(_strip_comments(value))
    head = parts[0].split()
    authserv_id = head[0].lower() if head else ""
    results: list[AuthResult] = []
    for part in parts[1:]:
        pairs = _PAIR.findall(part)
        if not pairs:
            continue
        method, result = pairs[0]
        properties: dict[str, str] = {}
        for key, raw in pairs[1:]:
            properties.setdefault(key.lower(), raw.strip('"'))
        results.append(AuthResult(method.split("/")[0].lower(), result.lower(), properties))
    return authserv_id, results


def _address_domain(value: str) -> str:
    return _domain(value.rpartition("@")[2])


def our_authentication_results(
    headers: Iterable[tuple[str, str]], trusted: set[str]
) -> tuple[list[tuple[str, list[AuthResult]]], str | None]:
    """The Authentication-Results our own MTA added: ([(authserv-id, results)], None), or
    ([], why not).

    From the topmost Authentication-Results header down, every one with a trusted authserv-id
    (each milter adds its own: OpenDMARC's lands above OpenDKIM's), up to the first one with
    another authserv-id or the first Received header below them (our MTA's own trace line:
    what lies below it came with the message, and may be forged)."""
    run: list[tuple[str, list[AuthResult]]] = []
    for name, value in headers:
        lowered = name.lower()
        if lowered == "authentication-results":
            authserv_id, results = parse_authentication_results(value)
            if authserv_id not in trusted:
                if run:
                    break
                return [], f"topmost Authentication-Results is from untrusted {authserv_id!r}"
            run.append((authserv_id, results))
        elif lowered == "received" and run:
            break
    if not run:
        return [], "no Authentication-Results header"
    return run, None


def check_authentication_results(
    headers: Iterable[tuple[str, str]], from_domain: str, trusted_authserv_ids: Sequence[str]
) -> SenderVerdict:
    """Verdict from our MTA's Authentication-Results (`our_authentication_results`).

    Passes on `dmarc=pass` for the From domain, or — when DMARC did not fail (`none`: the
    domain publishes no DMARC record, or no DMARC result at all) — on `dkim=pass` by a domain
    aligned with it. An explicit `dmarc=fail` for the From domain is never overridden."""
    trusted = {_domain(item) for item in trusted_authserv_ids if item.strip()}
    if not trusted:
        return SenderVerdict(False, None, None, "no trusted authserv-id configured")
    run, why = our_authentication_results(headers, trusted)
    if why is not None:
        return SenderVerdict(False, None, None, why)
    authserv_id = run[0][0]
    results = [item for _id, items in run for item in items]
    dmarc = [
        item.result for item in results
        if item.method == "dmarc"
        and _domain(item.properties.get("header.from", from_domain)) == _domain(from_domain)
    ]
    if "fail" in dmarc:
        return SenderVerdict(False, None, None, f"{authserv_id}: dmarc=fail")
    if "pass" in dmarc:
        return SenderVerdict(True, "dmarc", _domain(from_domain), f"{authserv_id}: dmarc=pass")
    for item in results:
        if item.method == "dkim" and item.result == "pass":
            signer = item.properties.get("header.d") or _address_domain(
                item.properties.get("header.i", "")
            )
            if signer and aligned(signer, from_domain):
                dmarc_word = f"dmarc={dmarc[0]}, " if dmarc else ""
                reason = f"{authserv_id}: {dmarc_word}dkim=pass header.d={signer}"
                return SenderVerdict(True, "dkim", _domain(signer), reason)
    summary = ", ".join(f"{item.method}={item.result}" for item in results) or "no results"
    return SenderVerdict(False, None, None, f"{authserv_id}: {summary} (not aligned or no pass)")


# --- our own DKIM verification ---------------------------------------------------------------


def _txt_value(text: str) -> str:
    """A TXT value as written in a zone file: one or more "quoted" strings, or bare text."""
    text = text.strip()
    if text.startswith('"'):
        pieces = re.findall(r'"((?:[^"\\]|\\.)*)"', text)
        return "".join(piece.replace('\\"', '"').replace("\\\\", "\\") for piece in pieces)
    return text


def parse_txt_file(content: str) -> dict[str, bytes]:
    """`<selector>._domainkey.<domain> <TXT value>` lines (# comments, blank lines ignored)."""
    records: dict[str, bytes] = {}
    for number, line in enumerate(content.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        parts = stripped.split(None, 1)
        if len(parts) != 2:
            raise DkimKeyFileError(f"line {number}: expected '<name> <TXT value>'")
        name, value = parts
        # zone-file style "name IN TXT value" is accepted too
        value = re.sub(r"^(?:\d+\s+)?(?:IN\s+)?TXT\s+", "", value, flags=re.IGNORECASE)
        records[_domain(name)] = _txt_value(value).encode("utf-8")
    return records


def txt_file_dnsfunc(path: Path) -> DnsFunc:
    """A dkimpy dnsfunc answering from a TIMEBOT_DKIM_TXT_FILE instead of DNS."""
    try:
        records = parse_txt_file(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise DkimKeyFileError(f"cannot read {path}: {error}") from error

    def lookup(name: bytes | str, timeout: float = 5) -> bytes | None:
        key = name.decode("utf-8", "replace") if isinstance(name, bytes) else name
        return records.get(_domain(key))

    return lookup


def dns_dnsfunc() -> DnsFunc:
    """dkimpy's own DNS lookup (dnspython)."""
    lookup: DnsFunc = dkim.dnsplug.get_txt
    return lookup


def _covers_whole_body(raw: bytes, tags: dict[bytes, bytes]) -> tuple[bool, str]:
    length = tags.get(b"l")
    if length is None:
        return True, ""
    try:
        _headers, body = dkim.rfc822_parse(raw)
        policy = CanonicalizationPolicy.from_c_value(tags.get(b"c", b"simple/simple"))
        canonical = policy.canonicalize_body(body)
        signed = int(length)
    except (ValueError, InvalidCanonicalizationPolicyError, dkim.DKIMException):
        return False, "unreadable l= or c="
    if signed < len(canonical):
        return False, f"l={signed} covers only part of the {len(canonical)}-byte body"
    return True, ""


def check_dkim(raw: bytes, from_domain: str, dnsfunc: DnsFunc) -> SenderVerdict:
    """Verify each DKIM-Signature ourselves; pass on the first valid, aligned, whole-body one."""
    try:
        verifier = dkim.DKIM(raw)
        signatures = [
            value for name, value in verifier.headers if name.lower() == b"dkim-signature"
        ]
    except Exception as error:  # dkimpy's parser refuses badly broken messages
        return SenderVerdict(False, None, None, f"message unreadable for DKIM: {error}")
    if not signatures:
        return SenderVerdict(False, None, None, "no DKIM signature")
    reasons: list[str] = []
    for index, value in enumerate(signatures):
        try:
            tags = parse_tag_value(value)
        except InvalidTagValueList:
            reasons.append(f"signature {index + 1}: unreadable")
            continue
        signer = tags.get(b"d", b"").decode("ascii", "replace")
        if not aligned(signer, from_domain):
            reasons.append(f"d={signer} is not aligned with {from_domain}")
            continue
        signed_headers = [h.strip().lower() for h in tags.get(b"h", b"").split(b":")]
        if b"from" not in signed_headers:
            reasons.append(f"d={signer}: the From header is not signed")
            continue
        whole, why = _covers_whole_body(raw, tags)
        if not whole:
            reasons.append(f"d={signer}: {why}")
            continue
        try:
            valid = bool(verifier.verify(idx=index, dnsfunc=dnsfunc))
        except Exception as error:  # DKIMException and friends: a bad signature, not a crash
            reasons.append(f"d={signer}: {error}")
            continue
        if valid:
            return SenderVerdict(True, "dkim-verified", _domain(signer),
                                 f"DKIM signature of d={signer} verified")  # fmt: skip
        reasons.append(f"d={signer}: signature does not verify")
    return SenderVerdict(False, None, None, "; ".join(reasons))


def authenticate_sender(
    raw: bytes,
    message: ReadMessage,
    *,
    trusted_authserv_ids: Sequence[str] = (),
    dnsfunc: DnsFunc | None = None,
) -> SenderVerdict:
    """Authentication-Results first, then our own DKIM verification (see the module doc).

    `dnsfunc`: `txt_file_dnsfunc(path)` for TIMEBOT_DKIM_TXT_FILE, None for DNS."""
    if message.from_address is None or message.from_domain is None:
        count = len(message.from_addresses)
        return SenderVerdict(False, None, None, f"{count} From addresses (need exactly one)")
    from_domain = message.from_domain
    by_header = check_authentication_results(message.headers, from_domain, trusted_authserv_ids)
    if by_header.authenticated:
        return by_header
    by_dkim = check_dkim(raw, from_domain, dnsfunc or dns_dnsfunc())
    if by_dkim.authenticated:
        return by_dkim
    return SenderVerdict(False, None, None, f"{by_header.reason}; {by_dkim.reason}")
