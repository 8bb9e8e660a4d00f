"""TEAMS_APP_CERTIFICATE instead of a password: the app's token is asked for with a client
assertion signed by the certificate's key (x5t = its SHA-1 thumbprint), which the fake token
service checks against the certificate registered for the app."""

from __future__ import annotations

import asyncio
import datetime
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from shell.demo_teams import FakeTeams
from tests.bot.teams.harness import APP_ID, start_teams_world


def self_signed(path: Path) -> x509.Certificate:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "timebot-teams-test")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(days=1))
                   .not_valid_after(now + datetime.timedelta(days=30))
                   .sign(key, hashes.SHA256()))
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption())
                     + certificate.public_bytes(serialization.Encoding.PEM))
    return certificate


async def test_the_certificate_gets_the_app_token(tmp_path: Path) -> None:
    pem = tmp_path / "teams.pem"
    fake = FakeTeams(APP_ID, "", certificate=self_signed(pem))
    world = await start_teams_world("sqlite", tmp_path / "data", {
        "TEAMS_APP_PASSWORD": "", "TEAMS_APP_CERTIFICATE": str(pem)}, fake)
    try:
        member = await world.member("Cora Cert")
        assert (await world.send(world.fake.message(member.teams, "help"))).status_code == 202
        sent = await world.fake.wait_for("send", conversation_id=member.teams.conversation_id)
        assert "timesheet submit" in str(sent[0].body["text"])
        assert sent[0].token in world.fake.tokens
        # Another certificate's key is refused: no token, nothing sent.
        world.fake.certificate = self_signed(tmp_path / "other.pem")
        world.fake.tokens.clear()
        other = await world.member("Otto Other")
        asked = world.fake.token_requests
        assert (await world.send(world.fake.message(other.teams, "help"))).status_code == 202
        for _ in range(200):
            if world.fake.token_requests >= asked + 2:  # the lookup's and the reply's
                break
            await asyncio.sleep(0.05)
        assert world.fake.token_requests >= asked + 2
        assert not world.fake.calls_to("send", other.teams.conversation_id)
    finally:
        await world.stop()
