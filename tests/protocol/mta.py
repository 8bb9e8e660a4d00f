"""A private Postfix + OpenDKIM + OpenDMARC + dnsmasq, configured from deploy/mta/ (no tests
here): the files shipped for the compose MTA, copied into a temporary directory and changed
only where a private instance must differ (ports, paths, names, a catch-all Maildir for the
mail Postfix relays out). Ports are free loopback ports; the milters resolve through a dnsmasq
on an address of their own in 127/8 (port 53, as a resolver needs), which they see as
/etc/resolv.conf in a private mount namespace (`unshare --mount`, root only)."""

from __future__ import annotations

import contextlib
import os
import pwd
import random
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.net import free_port

DEPLOY_MTA = Path(__file__).resolve().parents[2] / "deploy" / "mta"
TOOLS = ("postfix", "postconf", "opendkim", "opendmarc", "dnsmasq", "unshare")
SBIN = ("/usr/sbin", "/usr/bin", "/sbin", "/bin")


def which(tool: str) -> str | None:
    return shutil.which(tool) or shutil.which(tool, path=os.pathsep.join(SBIN))


def missing_tools() -> list[str]:
    return [tool for tool in TOOLS if which(tool) is None]


def skip_reason() -> str | None:
    missing = missing_tools()
    if missing:
        return (f"{', '.join(missing)} not installed (apt-get install postfix opendkim "
                "opendkim-tools opendmarc dnsmasq; .ci/run does)")
    if os.geteuid() != 0:
        return "a private Postfix (postfix -c DIR start) and unshare --mount need root"
    return None


def set_options(text: str, options: dict[str, str]) -> str:
    """A milter config (`Name value` lines) with these options replaced or added."""
    lines = [line for line in text.splitlines()
             if line.split(maxsplit=1)[:1] not in ([name] for name in options)]
    lines += [f"{name} {value}" for name, value in options.items()]
    return "\n".join(lines) + "\n"


@dataclass
class Mta:
    """The running instance: where to send, what it calls itself, where relayed mail lands."""

    root: Path
    hostname: str
    smtp_port: int
    relay_port: int
    dns_address: str
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def catchall(self) -> Path:
        return self.root / "catchall" / "inbox" / "new"

    def log(self) -> str:
        parts = []
        for name in ("maillog", "opendkim.log", "opendmarc.log", "dnsmasq.log"):
            path = self.root / name
            if path.exists():
                parts.append(f"--- {name}\n{path.read_text(errors='replace')[-6000:]}")
        return "\n".join(parts)


def _run(*command: str) -> None:
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: {completed.stdout}{completed.stderr}")


def _in_mount_ns(resolv: Path, command: list[str], log: Path) -> subprocess.Popen[bytes]:
    """`command` seeing `resolv` as /etc/resolv.conf (a private mount namespace)."""
    script = f'mount --bind "{resolv}" /etc/resolv.conf && exec "$@"'
    with log.open("wb") as out:
        return subprocess.Popen(
            [which("unshare") or "unshare", "--mount", "--propagation", "private",
             "sh", "-c", script, "sh", *command],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )


def _wait_listening(port: int, process: subprocess.Popen[bytes], what: str, log: Path,
                    host: str = "127.0.0.1", wait_s: float = 20.0) -> None:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited: {log.read_text(errors='replace')}")
        with socket.socket() as sock:
            if sock.connect_ex((host, port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on {host}:{port}")


def _postfix_config(root: Path, hostname: str, domain: str, lmtp_port: int, smtp_port: int,
                    relay_port: int, milters: tuple[int, int], relayed_domain: str) -> None:
    for name in ("main.cf", "master.cf"):
        shutil.copy(DEPLOY_MTA / "postfix" / name, root / name)
    master = (root / "master.cf").read_text()
    master = re.sub(r"^smtp(\s+)inet", rf"127.0.0.1:{smtp_port}\1inet", master, flags=re.M)
    master = re.sub(r"^587(\s+)inet", rf"127.0.0.1:{relay_port}\1inet", master, flags=re.M)
    (root / "master.cf").write_text(master)
    transport = (DEPLOY_MTA / "postfix" / "transport").read_text()
    transport = transport.replace("timebot.example.com", domain).replace(
        "lmtp:[timebot]:2424", f"lmtp:[127.0.0.1]:{lmtp_port}")
    (root / "transport").write_text(transport)
    postfix = pwd.getpwnam("postfix")
    catchall = root / "catchall"
    catchall.mkdir()
    os.chown(catchall, postfix.pw_uid, postfix.pw_gid)
    settings = {
        "queue_directory": root / "queue",
        "data_directory": root / "data",
        "myhostname": hostname,
        "relay_domains": domain,
        "transport_maps": f"texthash:{root / 'transport'}",
        "inet_interfaces": "127.0.0.1",
        "smtpd_milters": f"inet:127.0.0.1:{milters[0]}, inet:127.0.0.1:{milters[1]}",
        "maillog_file": root / "maillog",
        "maillog_file_prefixes": root,
        # What Postfix relays out for timebot (the receipts) lands in one Maildir here.
        "virtual_mailbox_domains": relayed_domain,
        "virtual_mailbox_base": catchall,
        "virtual_mailbox_maps": "static:inbox/",
        "virtual_uid_maps": f"static:{postfix.pw_uid}",
        "virtual_gid_maps": f"static:{postfix.pw_gid}",
        "smtp_dns_support_level": "disabled",
        "address_verify_poll_delay": "1s",
    }
    for directory in ("queue", "data"):
        (root / directory).mkdir()
    os.chown(root / "data", postfix.pw_uid, postfix.pw_gid)
    _run(which("postconf") or "postconf", "-c", str(root), "-e",
         *(f"{name}={value}" for name, value in settings.items()))


@contextlib.contextmanager
def running_mta(*, domain: str, hostname: str, lmtp_port: int, relayed_domain: str,
                txt_records: dict[str, str]) -> Iterator[Mta]:
    """Start dnsmasq (serving `txt_records`), OpenDKIM, OpenDMARC and Postfix; stop them all."""
    root = Path(tempfile.mkdtemp(prefix="timebot-mta-"))
    root.chmod(0o755)  # the postfix user traverses it (data_directory, the Maildir)
    dns_address = f"127.{random.randint(1, 254)}.{random.randint(1, 254)}.53"
    mta = Mta(root, hostname, free_port(), free_port(), dns_address)
    postfix_started = False
    try:
        resolv = root / "resolv.conf"
        resolv.write_text(f"nameserver {dns_address}\noptions attempts:1 timeout:2\n")
        dnsmasq = [which("dnsmasq") or "dnsmasq", "--keep-in-foreground", "--log-queries",
                   "--log-facility=-", "--conf-file=/dev/null", "--no-resolv", "--no-hosts",
                   f"--listen-address={dns_address}", "--bind-interfaces", "--port=53",
                   "--user=root"]
        # Authoritative for the test domains: a name without a record is NXDOMAIN, which is
        # what a domain without DMARC looks like.
        dnsmasq += [f"--local=/{name}/" for name in {relayed_domain, domain}]
        dnsmasq += [f"--txt-record={name},{value}" for name, value in txt_records.items()]
        with (root / "dnsmasq.log").open("wb") as out:
            mta.processes.append(subprocess.Popen(dnsmasq, stdout=out, stderr=subprocess.STDOUT,
                                                  start_new_session=True))
        milter_ports = (free_port(), free_port())
        dkim_conf = set_options((DEPLOY_MTA / "opendkim.conf").read_text(), {
            "Socket": f"inet:{milter_ports[0]}@127.0.0.1", "AuthservID": hostname,
            "Nameservers": dns_address, "Syslog": "no",
        })
        (root / "opendkim.conf").write_text(dkim_conf)
        # The test's "internet" is loopback, which OpenDMARC skips by default (IgnoreHosts).
        (root / "dmarc-ignore-hosts").write_text("192.0.2.1\n")
        dmarc_conf = set_options((DEPLOY_MTA / "opendmarc.conf").read_text(), {
            "IgnoreHosts": str(root / "dmarc-ignore-hosts"),
            "Socket": f"inet:{milter_ports[1]}@127.0.0.1", "AuthservID": hostname,
            "TrustedAuthservIDs": hostname,
        })
        (root / "opendmarc.conf").write_text(dmarc_conf)
        for name, command, port in (
            ("opendkim", [which("opendkim") or "opendkim", "-f", "-v", "-x",
                          str(root / "opendkim.conf")], milter_ports[0]),
            ("opendmarc", [which("opendmarc") or "opendmarc", "-f", "-v", "-c",
                           str(root / "opendmarc.conf")], milter_ports[1]),
        ):
            log = root / f"{name}.log"
            process = _in_mount_ns(resolv, command, log)
            mta.processes.append(process)
            _wait_listening(port, process, name, log)
        _postfix_config(root, hostname, domain, lmtp_port, mta.smtp_port, mta.relay_port,
                        milter_ports, relayed_domain)
        _run(which("postfix") or "postfix", "-c", str(root), "start")
        postfix_started = True
        deadline = time.monotonic() + 20
        while True:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", mta.smtp_port)) == 0:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"postfix did not listen:\n{mta.log()}")
            time.sleep(0.05)
        yield mta
    finally:
        if postfix_started:
            subprocess.run([which("postfix") or "postfix", "-c", str(root), "stop"],
                           capture_output=True, check=False)
            _wait_master_gone(root)
        for process in mta.processes:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(10)
        shutil.rmtree(root, ignore_errors=True)


def _wait_master_gone(root: Path, wait_s: float = 15.0) -> None:
    pid_file = root / "queue" / "pid" / "master.pid"
    try:
        pid = int(pid_file.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, 9)
