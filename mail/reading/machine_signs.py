"""The signs by which mail written by machines is recognised (pure data and matchers), used by
mail.inbound.loop_guard. Each group names where it comes from: RFC 3834 (automatic responses), RFC
2369 / 2919 (list headers), RFC 3464 / 6522 (delivery status reports), RFC 5965 and the ARF
drafts before it (abuse reports), and what the major providers and programs write (Gmail,
Outlook/Exchange, Yahoo, Postfix, Exim, Sendmail, qmail, Amazon SES, Mailman, Majordomo,
ezmlm, fml, Lotus Notes).

Decisions against false positives (each tested with human mail in tests/mail/human_corpus/):

- Sender local parts: the list-manager conventions are hyphenated (`team-request`,
  `owner-team`, `team-bounces`); `john.request@` or `request@` is a person's. `*-admin`
  (Mailman 2.0) and `*-owner` (Mailman 3) count only at a list host (`lists.`, `list.`, `ml.`,
  `mailman.` …): `it-admin@company.example` or `product-owner@company.example` may be an
  approver's own mailbox.
- `X-Auto-Response-Suppress` alone is not a sign: Exchange stamps it on mail that people write
  too (meeting answers, mail sent by delegates; Discourse removed it from its auto-generated
  check for the same reason). Exchange's automatic replies carry `Auto-Submitted` or
  `X-MS-Exchange-Inbox-Rules-Loop`, which are signs.
- `X-Abuse-Info`, `X-AntiAbuse`, `X-Abuse-Contact`: hosting providers (cPanel, Usenet
  servers) stamp them on every outgoing message, a person's included; only the report
  headers (`Feedback-Type`, `X-Abuse-Report…`, `X-ARF…`, Hotmail's `X-HmXmrOriginalRecipient`)
  are signs.
- Subjects: only how automatic messages *begin* ("Automatic reply:", "Out of Office:", …);
  the weak words a person may start a time@ subject with ("on vacation", "abwesend",
  "ausente", "afwezig", "on leave") count only as the whole subject or before a colon.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "ABUSE_LOCALS",
    "ABUSE_REPORT_HEADERS",
    "ABUSE_REPORT_PREFIXES",
    "AUTO_FLAG_HEADERS",
    "AUTO_MAILER",
    "AUTO_SUBJECT",
    "BOUNCE_SUBJECT",
    "DAEMON_LOCALS",
    "DAEMON_NAMES",
    "LIST_HEADERS",
    "NO_REPLY_LOCAL",
    "PRECEDENCE_MACHINE",
    "REPORT_PART_TYPES",
    "list_manager_address",
    "vacation_reply",
]

# --- bounces (RFC 3464 / 6522 and what MTAs write) --------------------------------------------

DAEMON_LOCALS = frozenset({
    "mailer-daemon", "mailer_daemon", "mailerdaemon", "mail-daemon", "mail_daemon",
    "maildaemon", "postmaster", "post_master", "post-master", "mdaemon", "bounce", "bounces",
    "bounce-notification", "ndr", "nondeliverable",
})
DAEMON_NAMES = re.compile(
    r"^(?:mail\s+delivery\s+(?:system|subsystem|service)|mailer[-_\s]?daemon|post[-_\s]?master"
    r"|microsoft\s+outlook|mail\s+administrator|internet\s+mail\s+delivery"
    r"|e-?mail\s+delivery\s+(?:system|service)|lotus\s+domino\s+delivery\s+system)$",
    re.IGNORECASE,
)
# Parts that only reports carry: delivery status (RFC 3464), read receipts (RFC 8098), abuse
# feedback (RFC 5965), and the per-recipient status of Exchange/Lotus variants.
REPORT_PART_TYPES = frozenset({
    "message/delivery-status", "message/global-delivery-status", "message/disposition-notification",
    "message/global-disposition-notification", "message/feedback-report",
    "text/rfc822-headers",
})
BOUNCE_SUBJECT = re.compile(
    r"""^\s*(?:
        undeliverable\b | undelivered\s+mail | delivery\s+status\s+notification
      | delivery\s+(?:has\s+)?failed | mail\s+delivery\s+failed | returned\s+mail\b
      | failure\s+notice | delivery\s+failure | delivery\s+notification\s*:
      | message\s+not\s+delivered | mail\s+system\s+error | undeliverable\s+message
      | warning\s*:\s*could\s+not\s+send | mail\s+could\s+not\s+be\s+delivered
      | delayed\s+mail | delivery\s+delayed | non[-\s]?delivery\s+(?:report|notification)
      | unzustellbar\b | nicht\s+zustellbar | unzustellbare\s+nachricht
      | benachrichtigung\s+zum\s+übermittlungsstatus | übermittlungsfehler
      | non\s+remis\b | non\s+distribuable | échec\s+de\s+(?:la\s+)?remise
      | notification\s+d['\u2019]état\s+de\s+(?:la\s+)?(?:remise|distribution)
      | no\s+se\s+puede\s+entregar | no\s+entregado | error\s+de\s+entrega
      | notificación\s+de\s+estado\s+de(?:l)?\s+(?:la\s+)?(?:entrega|envío)
      | onbestelbaar\b | niet\s+bezorgd | onbezorgbaar | kan\s+niet\s+worden\s+bezorgd
      | non\s+recapitabile | impossibile\s+recapitare | não\s+é\s+possível\s+entregar
      | olevererbart | kunne\s+ikke\s+leveres | niedostarczalne
    )""",
    re.IGNORECASE | re.VERBOSE,
)

# --- abuse reports (RFC 5965 and the ARF drafts, older feedback loops) -----------------------

ABUSE_REPORT_HEADERS = frozenset({
    "feedback-type", "x-feedback-report", "x-hmxmroriginalrecipient", "x-hmxmrreportingmta",
    "x-aol-scomp", "x-complaint-feedback",
})
ABUSE_REPORT_PREFIXES = ("x-abuse-report", "x-arf")  # X-Abuse-Report-Type, X-ARF-Version …
ABUSE_LOCALS = frozenset({
    "abuse", "abuse-report", "abuse-reports", "scomp", "fbl", "feedbackloop", "feedback-loop",
    "complaints", "arf", "staff-fbl", "spamreport", "spam-report",
})

# --- automatic responses (RFC 3834 and the headers that came before it) ----------------------

AUTO_FLAG_HEADERS = (  # lower-cased
    "x-autoreply", "x-autorespond", "x-autoresponder", "x-autoresponse", "x-auto-reply",
    "x-auto-response", "x-autoreply-from", "x-mail-autoreply", "x-vacation",
    "x-fc-machinegenerated", "x-cron-env",
)
PRECEDENCE_MACHINE = frozenset({"bulk", "junk", "list", "auto_reply", "auto-reply", "autoreply"})
# X-Mailer (or User-Agent) of the vacation programs and autoresponders.
AUTO_MAILER = re.compile(
    r"\b(?:vacation|autorespond(?:er)?|auto[-\s]?reply|auto[-\s]?responder|gnarwl"
    r"|out[-\s]of[-\s]office|yahoo\s+auto\s+response|cpanel\s+autoresponder|mail::vacation"
    r"|sieve\s+vacation|pigeonhole)\b",
    re.IGNORECASE,
)
NO_REPLY_LOCAL = re.compile(
    r"^(?:no|do[-_.]?not|dont|do[-_.]?no)[-_.]?reply(?:[-_.+].*)?$|^noreply\d*$|^no-?reply\d*$",
    re.IGNORECASE,
)
_WEAK = (
    r"on\s+vacation|on\s+leave|abwesend|ausente|afwezig|en\s+congés?|de\s+vacaciones"
    r"|in\s+urlaub"
)
AUTO_SUBJECT = re.compile(
    rf"""^\s*(?:
        out\s+of\s+(?:the\s+)?office\s*(?:$|[:(\-\u2013]|reply|auto|notice|message|response|until)
      | automatic\s+reply\b | automated\s+reply\b | auto(?:matic)?[-\s]?reply\b
      | auto(?:matic)?[-\s]?response\b | autoresponder\b
      | away\s+from\s+(?:the\s+)?office | i\s+am\s+(?:currently\s+)?(?:out|away|on\s+leave)
      | (?:{_WEAK})\s*(?::|$)
      | abwesenheitsnotiz | automatische\s+antwort\b | nicht\s+im\s+büro
      | außer\s+haus | ausser\s+haus | urlaubsabwesenheit | abwesenheit\s*:
      | réponse\s+automatique | reponse\s+automatique | absence\s+du\s+bureau
      | absent(?:e)?\s+du\s+bureau | message\s+d['\u2019]absence | réponse\s+d['\u2019]absence
      | respuesta\s+automática | respuesta\s+automatica | fuera\s+de\s+(?:la\s+)?oficina
      | automatisch\s+antwoord | niet\s+aanwezig | buiten\s+kantoor | afwezigheidsmelding
      | risposta\s+automatica | fuori\s+sede | resposta\s+automática | resposta\s+automatica
      | autosvar | automatisk\s+svar | automaattinen\s+vastaus | automatyczna\s+odpowied[zź]
      | automatická\s+odpověď | automatikus\s+válasz
    )""",
    re.IGNORECASE | re.VERBOSE,
)

# A vacation program's own reply says the person is away, whatever words they gave it: iCloud
# (`X-Apple-Action: VACATION`, its text the person's own, often without "away" or a date),
# Sieve's vacation (Pigeonhole: `Auto-Submitted: auto-replied (vacation)`), `X-Vacation`, and
# the vacation programs by X-Mailer.
_VACATION_MAILER = re.compile(r"^\s*(?:vacation\b|gnarwl\b|mail::vacation\b)", re.IGNORECASE)


def vacation_reply(headers: Iterable[tuple[str, str]]) -> bool:
    """Pure: whether these headers (name, value) say a vacation program wrote the message."""
    for name, value in headers:
        name, value = name.strip().lower(), value.strip().lower()
        if name == "x-apple-action" and value == "vacation":
            return True
        if name == "auto-submitted" and value.startswith("auto-replied") \
                and "(vacation)" in value:
            return True
        if name == "x-vacation" and value not in ("no", "false", "0", "none"):
            return True
        if name in ("x-mailer", "user-agent") and _VACATION_MAILER.match(value[:300]):
            return True
    return False


# --- mailing lists (RFC 2369, RFC 2919 and the managers' own headers) -------------------------

LIST_HEADERS = frozenset({
    "list-id", "list-help", "list-subscribe", "list-unsubscribe", "list-post", "list-owner",
    "list-archive", "list-unsubscribe-post", "mailing-list", "x-mailing-list", "x-mailman-version",
    "x-beenthere", "x-listprocessor-version", "x-listserver", "x-list-administrivia",
    "x-mlserver", "x-ezmlm-version", "x-mailman-rule-hits", "x-google-group-id",
})
_LIST_HOSTS = ("lists.", "list.", "ml.", "mailman.", "listserv.", "groups.")
_LIST_MANAGERS = frozenset({"majordomo", "listserv", "mailman", "ezmlm", "sympa", "listproc",
                            "mlmmj", "fml"})


def list_manager_address(address: str) -> bool:
    """A list manager's own address: `*-request`, `owner-*`, `*-bounces` (VERP
    `team-bounces+anna=example.com@`), the managers by name, or `*-admin` / `*-owner` at a
    list host."""
    local, _, domain = address.strip().lower().rpartition("@")
    local = local.split("+", 1)[0]
    if local in _LIST_MANAGERS or local.startswith("owner-"):
        return True
    if local.endswith(("-request", "-bounces", "-bounce")):
        return True
    return local.endswith(("-admin", "-owner")) and domain.startswith(_LIST_HOSTS)
