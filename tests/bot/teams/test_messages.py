"""POST /teams/messages through its real interface: activities signed as the Bot Framework
signs them (the fake issuer's key), answers read from the fake Bot Connector."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from bot.teams.component import teams_of
from tests.bot.teams.harness import TeamsWorld, start_teams_world
from tests.timebot.timeentry_setup import Fixture, add_employee, build, records_of


@pytest.fixture(scope="module")
async def world(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[TeamsWorld]:
    started = await start_teams_world("sqlite", tmp_path_factory.mktemp("teams"))
    try:
        yield started
    finally:
        await started.stop()


@pytest.fixture(scope="module")
async def fx(world: TeamsWorld) -> Fixture:
    """The projects of timebot.timeentry's tests (Acme/Website, Beta, Alpha, Alps), once."""
    return await build(world.org)


def texts(world: TeamsWorld, conversation_id: str) -> list[str]:
    return [str(call.body.get("text") or "")
            for call in world.fake.calls_to("send", conversation_id)]


async def test_unsigned_forged_or_misdirected_activities_are_401(world: TeamsWorld) -> None:
    member = await world.member("Una")
    activity = world.fake.message(member.teams, "3h @nowhere")
    other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    refused = {
        "unsigned": await world.send(activity, token=""),
        "not a JWT": await world.send(activity, token="not-a-jwt"),
        "bad signature": await world.send(activity, token=world.fake.sign(activity,
                                                                          key=other_key)),
        "wrong audience": await world.send(activity, token=world.fake.sign(
            activity, audience="another-app")),
        "wrong issuer": await world.send(activity, token=world.fake.sign(
            activity, issuer="https://evil.example")),
        "expired": await world.send(activity, token=world.fake.sign(activity,
                                                                    expires_in=-3600)),
        "serviceUrl not the token's": await world.send(activity, token=world.fake.sign(
            activity, service_url="http://127.0.0.1:9/")),
    }
    assert {reason: answer.status_code for reason, answer in refused.items()} == {
        reason: 401 for reason in refused}
    assert not world.fake.calls_to("send", member.teams.conversation_id)


async def test_a_signed_body_that_is_no_activity_is_400(world: TeamsWorld) -> None:
    token = world.fake.sign({"serviceUrl": world.fake.service_url})
    for body in (b"{not json", b"[]", b'"text"', b'{"type": 5}', b'{"type": "message",'
                 b' "from": "x"}', b"\xff\xfe"):
        answer = await world.send({}, token=token, body=body)
        assert answer.status_code == 400, (body, answer.text)


async def test_a_tenant_not_connected_gets_a_polite_answer_and_nothing_else(
        world: TeamsWorld) -> None:
    stranger = world.fake.add_member(str(uuid.uuid4()), "someone@elsewhere.example")
    answer = await world.send(world.fake.message(stranger, "3h @project"))
    assert answer.status_code == 202
    sent = await world.fake.wait_for("send", conversation_id=stranger.conversation_id)
    assert "has not connected" in str(sent[0].body["text"])
    assert sent[0].body["replyToId"]
    assert not world.fake.calls_to("member", stranger.conversation_id)


async def test_an_unknown_user_is_told_how_to_link(world: TeamsWorld) -> None:
    unknown = world.fake.add_member(world.tenant_id, "nobody@unknown.example")
    answer = await world.send(world.fake.message(unknown, "3h @project"))
    assert answer.status_code == 202
    sent = await world.fake.wait_for("send", conversation_id=unknown.conversation_id)
    text = str(sent[0].body["text"])
    assert "nobody@unknown.example" in text and "administrator" in text


async def test_a_linked_user_logs_time_once_even_when_teams_retries(
        world: TeamsWorld, fx: Fixture) -> None:
    person = await add_employee(fx, "Ann Teams")
    ann = world.fake.add_member(world.tenant_id, person.email, "Ann Teams")
    activity = world.fake.message(ann, "2h30 @acme/web fixing the header")
    assert (await world.send(activity)).status_code == 202
    assert (await world.send(activity)).status_code == 202  # Teams' retry: the same id
    sent = await world.fake.wait_for("send", conversation_id=ann.conversation_id)
    assert str(sent[0].body["text"]).splitlines()[0] == (
        "Logged: 2h 30m on Wed 18 Mar 2026 · @Acme/Website · “fixing the header”")
    assert sent[0].body["replyToId"] == activity["id"]
    assert len(await records_of(world.org, person.id)) == 1
    assert len(texts(world, ann.conversation_id)) == 1
    # Matched once by the member lookup (Microsoft's e-mail), then by the object id recorded.
    assert len(world.fake.calls_to("member", ann.conversation_id)) == 1
    assert (await world.send(world.fake.message(ann, "help"))).status_code == 202
    answers = await world.fake.wait_for("send", 2, ann.conversation_id)
    assert "timesheet submit" in str(answers[1].body["text"])
    assert (await world.send(world.fake.message(ann, "undo"))).status_code == 202
    answers = await world.fake.wait_for("send", 3, ann.conversation_id)
    assert str(answers[2].body["text"]).startswith("Undone: 2h 30m")
    assert await records_of(world.org, person.id) == []
    # Written one after the other without waiting: answered in that order.
    for text in ("/time 1h @beta monday", "timesheet submit", "timesheet status"):
        assert (await world.send(world.fake.message(ann, text))).status_code == 202
    answers = await world.fake.wait_for("send", 6, ann.conversation_id)
    assert str(answers[3].body["text"]).startswith("Logged: 1h on Mon 16 Mar 2026 · @Beta")
    assert str(answers[4].body["text"]).startswith("Timesheet for the week of Mon 16 Mar 2026")
    status = str(answers[5].body["text"])
    assert status.startswith("This week (Mon 16 Mar 2026 to Sun 22 Mar 2026): approved")
    assert len(world.fake.calls_to("member", ann.conversation_id)) == 1


async def test_a_display_name_never_identifies_anyone(world: TeamsWorld, fx: Fixture) -> None:
    real = await add_employee(fx, "Bea Real")
    # Another account of the tenant, named like Bea, whose Microsoft e-mail is not hers.
    impostor = world.fake.add_member(world.tenant_id, "mallory@unknown.example", "Bea Real")
    activity = world.fake.message(impostor, "1h @acme")
    activity["from"]["name"] = real.name
    assert (await world.send(activity)).status_code == 202
    sent = await world.fake.wait_for("send", conversation_id=impostor.conversation_id)
    assert "mallory@unknown.example" in str(sent[0].body["text"])
    assert await records_of(world.org, real.id) == []


async def test_a_throttled_reply_is_sent_after_retry_after_and_a_refused_one_unlinks(
        world: TeamsWorld, fx: Fixture) -> None:
    person = await add_employee(fx, "Tia Throttled")
    tia = world.fake.add_member(world.tenant_id, person.email, "Tia Throttled")
    world.fake.fail("send", 429, tia.conversation_id)
    assert (await world.send(world.fake.message(tia, "help"))).status_code == 202
    calls = await world.fake.wait_for("send", 2, tia.conversation_id)
    assert calls[1].at - calls[0].at >= 0.9  # Retry-After: 1
    front = teams_of(world.live.app.state.runtime)
    assert front is not None
    assert await front.tenants.user_of_person(world.org.id, person.id) is not None
    # The app blocked for her (403): she is not written to any more.
    world.fake.fail("send", 403, tia.conversation_id)
    assert (await world.send(world.fake.message(tia, "help"))).status_code == 202
    await world.fake.wait_for("send", 3, tia.conversation_id)
    for _ in range(100):
        if await front.tenants.user_of_person(world.org.id, person.id) is None:
            break
        await asyncio.sleep(0.05)
    assert await front.tenants.user_of_person(world.org.id, person.id) is None


async def test_answers_in_the_persons_language_and_formats(world: TeamsWorld, fx: Fixture) -> None:
    person = await add_employee(fx, "Fanny French")
    await world.org.admin.gql(
        "mutation($id: SvcId!) { editPersonLang(id: $id, lang: \"fr\") { id } "
        "editPersonLocalisationDateFormat(id: $id, dateFormat: \"DD/MM/YYYY\") { id } "
        "editPersonLocalisationDecimalFormat(id: $id, decimalFormat: \",\") { id } "
        "editPersonTimeSettingsDurationFormat(id: $id, durationFormat: 1) { id } }",
        {"id": person.id})
    fanny = world.fake.add_member(world.tenant_id, person.email, "Fanny French")
    assert (await world.send(world.fake.message(
        fanny, "<at>timebot</at> 2h30 @acme/web fixing the header"))).status_code == 202
    sent = await world.fake.wait_for("send", conversation_id=fanny.conversation_id)
    assert str(sent[0].body["text"]).splitlines()[0] == (
        "Enregistré : 2,5 h le mer. 18/03/2026 · @Acme/Website · “fixing the header”")
    assert (await world.send(world.fake.message(fanny, "aide?"))).status_code == 202
    sent = await world.fake.wait_for("send", 2, fanny.conversation_id)
    assert str(sent[1].body["text"]).startswith("Non compris, rien n'a été enregistré")
    assert (await world.send(world.fake.message(fanny, "help"))).status_code == 202
    sent = await world.fake.wait_for("send", 3, fanny.conversation_id)
    assert str(sent[2].body["text"]).startswith("Écrivez-moi une saisie")


async def test_an_invoke_without_a_handler_is_501_and_unsigned_401(world: TeamsWorld) -> None:
    member = await world.member("Ivo Invoke")
    invoke = {**world.fake.message(member.teams, ""), "type": "invoke",
              "name": "composeExtension/query", "value": {"commandId": "search"}}
    # (adaptiveCard/action has its handler: bot.teams.actions)
    assert (await world.send(invoke, token="")).status_code == 401
    assert (await world.send(invoke)).status_code == 501
