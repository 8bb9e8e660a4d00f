"""A real Dovecot IMAP server for tests, from a config file written here: a high port, its own
base_dir, a static passdb, a static userdb (uid=nobody), Maildir in a temp dir."""

from __future__ import annotations

import imaplib
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tests.net import free_port

DOVECOT = shutil.which("dovecot") or "/usr/sbin/dovecot"
PASSWORD = "imap-secret"

CONFIG = """
protocols = imap
listen = 127.0.0.1
base_dir = {root}/run
state_dir = {root}/state
log_path = {root}/dovecot.log
info_log_path = {root}/dovecot.log
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
mail_location = maildir:{root}/mail/%u
default_login_user = nobody
default_internal_user = nobody
default_internal_group = nogroup
first_valid_uid = 0
passdb {{
  driver = static
  args = password={password}
}}
userdb {{
  driver = static
  args = uid=nobody gid=nogroup home={root}/home/%u
}}
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
service anvil {{
  chroot =
}}
service imap-login {{
  chroot =
}}
"""


@dataclass
class Dovecot:
    root: Path
    port: int
    config: Path

    def client(self, user: str) -> imaplib.IMAP4:
        """A plain IMAP client (the standard library's), to deliver and to look."""
        client = imaplib.IMAP4("127.0.0.1", self.port)
        client.login(user, PASSWORD)
        return client

    def deliver(self, user: str, raw: bytes, mailbox: str = "INBOX") -> None:
        client = self.client(user)
        try:
            client.append(mailbox, "", imaplib.Time2Internaldate(time.time()), raw)
        finally:
            client.logout()

    def unseen(self, user: str, mailbox: str = "INBOX") -> list[bytes]:
        client = self.client(user)
        try:
            client.select(mailbox)
            _, data = client.uid("search", "UNSEEN")
            return data[0].split() if data and data[0] else []
        finally:
            client.logout()

    def stop(self) -> None:
        subprocess.run([DOVECOT, "-c", str(self.config), "stop"], capture_output=True,
                       timeout=30)
        shutil.rmtree(self.root, ignore_errors=True)


def start_dovecot() -> Dovecot:
    # Dovecot drops to `nobody`: the tree must be reachable by it (not under pytest's 0700 dir).
    root = Path(tempfile.mkdtemp(prefix="timebot-dovecot-", dir="/tmp"))
    os.chmod(root, 0o755)
    for folder in ("run", "state", "mail", "home"):
        (root / folder).mkdir()
    for folder in ("mail", "home"):
        shutil.chown(root / folder, "nobody", "nogroup")
    port = free_port()
    config = root / "dovecot.conf"
    config.write_text(CONFIG.format(root=root, port=port, password=PASSWORD))
    # Dovecot daemonises: its child keeps inherited pipes open, so give it none.
    subprocess.run([DOVECOT, "-c", str(config)], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=30)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            imaplib.IMAP4("127.0.0.1", port).logout()
            return Dovecot(root, port, config)
        except OSError:
            time.sleep(0.1)
    log = (root / "dovecot.log").read_text() if (root / "dovecot.log").exists() else ""
    raise RuntimeError(f"dovecot did not start: {log}")
