"""Quick entry as a conversation with no chat platform at all: the neutral core
(bot.chat.quick_entry) against the running timebot and its service, as a person with their
own key; the answers are neutral messages (what the Slack and Teams adapters render)."""

from __future__ import annotations

from bot.chat.person import ChatPerson
from bot.chat.quick_entry import EDIT, UNDO, QuickEntry
from tests.bot.slack.test_time_commands import World, world  # noqa: F401 (the module's server)
from tests.timebot.timeentry_setup import NOW_MS, records_of
from timebot.runtime import Runtime


async def test_a_conversation_logs_lists_undoes_and_helps(world: World) -> None:  # noqa: F811
    world.live.clock.set(NOW_MS)
    _user, member = await world.user("Tess Teams")
    runtime: Runtime = world.live.app.state.runtime  # type: ignore[attr-defined]
    person = ChatPerson(world.fx.org.id, member.id, member.name, member.email, member.apikey,
                        "Europe/Berlin")
    entry = QuickEntry(runtime, source="teams")

    logged = await entry.answer(person, "/time", "2h30 @acme/web fixing the header")
    assert logged.plain and logged.text == (
        "Logged: 2h 30m on Wed 18 Mar 2026 · @Acme/Website · “fixing the header”")
    undo, edit = logged.actions()
    assert (undo.id, edit.id) == (UNDO, EDIT) and undo.value == edit.value
    assert [r["duration"] for r in await records_of(world.fx.org, member.id)] == [150 * 60_000]
    assert await entry.reading_of(person, undo.value) == (
        "2h30 on Wed 18 Mar 2026 @Website “fixing the header”")

    listed = await entry.answer(person, "/time", "LIST")
    assert listed.text.startswith("Your entries (newest first):\n1. ")
    assert "fixing the header" in listed.text

    assert await entry.undo_record(person, undo.value) == (
        "Undone: 2h 30m on Wed 18 Mar 2026 · Website · “fixing the header”")
    assert await records_of(world.fx.org, member.id) == []

    helped = await entry.answer(person, "/timesheet", "nothing-known")
    assert helped.text.splitlines() == [
        "`/timesheet status` this and last week's status",
        "`/timesheet submit` `[last]` submit this (last) week"]
    unclear = await entry.answer(person, "/time", "week soon")
    assert unclear.text == "Write `/time week` or `/time week last`."
