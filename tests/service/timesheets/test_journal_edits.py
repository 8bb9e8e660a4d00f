"""editMessage, deleteMessage, the notification history and the e-mail templates' checks,
through POST /graphql: the author or an administrator edits and deletes, anyone else is
refused; a person reads and marks only their own notifications; a template that does not
render in the sandbox is refused naming the argument and the line."""

from __future__ import annotations

from tests.mail.reviews_support import outbox_rows, parse, runtime_of, text_part, wait_for
from tests.support import Org
from tests.timebot.signin_support import browser, request_code

ADD = ("mutation($c: SvcMessageContent!, $m: [SvcReferenceInput]) { addMessage(content: $c, "
       "mentions: $m) { id } }")
EDIT = ("mutation($id: SvcId!, $c: SvcMessageContent!, $m: [SvcReferenceInput]) { "
        "editMessage(id: $id, content: $c, mentions: $m) { id content mentions { id } } }")
DELETE = "mutation($id: SvcId!) { deleteMessage(id: $id) { id content } }"
JOURNAL = "{ getJournal { id content } }"
HISTORY = ("query($b: SvcTimestamp, $f: [String], $c: String, $l: Int) { getNotificationHistory("
           "limit: $l, before: $b, filters: $f, channel: $c) { unreadCount items { id type "
           "channel createdAt readAt payload { actorId actorName summary entityId } } } }")
MARK = "mutation($ids: [SvcId!]) { markNotificationsRead(ids: $ids) }"
MARK_ALL = "mutation { markAllNotificationsRead }"
TEMPLATE = ("mutation($t: String) { editOrganisationEmailTemplateTimesheetSubmitted(template: $t)"
            " { emailTemplates { timesheetSubmitted { value path { id } } } } }")
SIGNIN_TEMPLATE = ("mutation($t: String) { editOrganisationEmailTemplateSignin(template: $t) "
                   "{ id } }")
PERSON_TEMPLATE = ("mutation($id: SvcId!, $t: String) { editPersonEmailTemplateReminder(id: $id, "
                   "template: $t) { id } }")


async def test_edit_and_delete_own_messages_admins_any_others_refused(org: Org) -> None:
    ann = await org.add_member("Ann")
    bob = await org.add_member("Bob")
    mine = (await ann.gql(ADD, {"c": "Lunch at noon", "m": [{"id": bob.id, "type": "person"}]})
            )["addMessage"]["id"]

    # Bob may not edit or delete Ann's message; nothing changes.
    assert await bob.gql.denied(EDIT, {"id": mine, "c": "hacked"}) == ["Mutation.editMessage"]
    assert await bob.gql.denied(DELETE, {"id": mine}) == ["Mutation.deleteMessage"]
    # Ann edits her own: text and (when given) mentions; without mentions they stay.
    edited = (await ann.gql(EDIT, {"id": mine, "c": "Lunch at one"}))["editMessage"]
    assert edited == {"id": mine, "content": "Lunch at one", "mentions": [{"id": bob.id}]}
    edited = (await ann.gql(EDIT, {"id": mine, "c": "Lunch at two", "m": []}))["editMessage"]
    assert edited["mentions"] == []
    # A mention of something unknown is refused naming it, and nothing is written.
    message = await ann.gql.error(EDIT, {"id": mine, "c": "x", "m": [
        {"id": "0123456789abcdef01234567", "type": "person"}]})
    assert message.startswith('Invalid argument "mentions[0].id"'), message
    assert [m["content"] for m in (await ann.gql(JOURNAL))["getJournal"]] == ["Lunch at two"]
    # An unknown id is named; an administrator edits and deletes anyone's message.
    unknown = await ann.gql.error(DELETE, {"id": "0123456789abcdef01234567"})
    assert unknown.startswith('Invalid argument "id"'), unknown
    await org.admin.gql(EDIT, {"id": mine, "c": "Moderated"})
    assert (await org.admin.gql(DELETE, {"id": mine}))["deleteMessage"]["content"] == "Moderated"
    assert (await ann.gql(JOURNAL))["getJournal"] == []
    # Deleting twice: the second finds nothing (a retry does no harm).
    again = await ann.gql.error(DELETE, {"id": mine})
    assert again.startswith('Invalid argument "id"'), again

    # Ann deletes her own; its reply stays, replying to nothing.
    first = (await ann.gql(ADD, {"c": "First"}))["addMessage"]["id"]
    reply = (await bob.gql("mutation($r: SvcId) { addMessage(content: \"Re\", replyTo: $r) "
                           "{ id } }", {"r": first}))["addMessage"]["id"]
    await ann.gql(DELETE, {"id": first})
    found = await bob.gql("{ getJournal { id replyTo { id } } }")
    assert found["getJournal"] == [{"id": reply, "replyTo": None}]
    # Every edit and deletion is audited.
    trail = await org.admin.gql('{ getAuditTrails(operations: ["editMessage", "deleteMessage"])'
                                " { operationName } }")
    assert sorted(e["operationName"] for e in trail["getAuditTrails"]) == [
        "deleteMessage", "deleteMessage", "editMessage", "editMessage", "editMessage"]


async def test_notification_history_is_the_callers_own(org: Org) -> None:
    ann = await org.add_member("Ann")
    bob = await org.add_member("Bob")
    to_bob = {"type": "person", "id": bob.id}
    ids = []
    for n in range(3):
        org.live.clock.advance(1000)
        ids.append((await ann.gql(ADD, {"c": f"Note {n}", "m": [to_bob]}))["addMessage"]["id"])
    await bob.gql(ADD, {"c": "My own note", "m": [to_bob]})  # his own: not a notification

    history = (await bob.gql(HISTORY))["getNotificationHistory"]
    assert history["unreadCount"] == 3
    assert [i["id"] for i in history["items"]] == ids[::-1]
    first = history["items"][-1]
    assert first["type"] == "message" and first["channel"] == "journal"
    assert first["readAt"] is None
    assert first["payload"] == {"actorId": ann.id, "actorName": "Ann", "summary": "Note 0",
                                "entityId": None}
    # Ann has none; her marking Bob's items read changes nothing for him.
    assert (await ann.gql(HISTORY))["getNotificationHistory"] == {"unreadCount": 0, "items": []}
    assert (await ann.gql(MARK, {"ids": ids}))["markNotificationsRead"] is True
    assert (await bob.gql(HISTORY))["getNotificationHistory"]["unreadCount"] == 3
    # Bob marks one read (twice: no harm), then all.
    await bob.gql(MARK, {"ids": [ids[0], ids[0]]})
    await bob.gql(MARK, {"ids": [ids[0]]})
    history = (await bob.gql(HISTORY))["getNotificationHistory"]
    assert history["unreadCount"] == 2
    assert [i["readAt"] is not None for i in history["items"]] == [False, False, True]
    page = (await bob.gql(HISTORY, {"l": 1, "b": history["items"][0]["createdAt"]}))
    assert [i["id"] for i in page["getNotificationHistory"]["items"]] == [ids[1]]
    assert (await bob.gql(HISTORY, {"c": "push"}))["getNotificationHistory"]["items"] == []
    assert (await bob.gql(HISTORY, {"f": ["timesheetApproved"]}))[
        "getNotificationHistory"]["items"] == []
    bad = await bob.gql.error(HISTORY, {"l": 0})
    assert bad.startswith('Invalid argument "limit"'), bad
    bad = await bob.gql.error(HISTORY, {"f": ["message"] * 51})
    assert bad.startswith('Invalid argument "filters"'), bad
    bad = await bob.gql.error(MARK, {"ids": [ids[0]] * 1001})
    assert bad.startswith('Invalid argument "ids"'), bad
    await bob.gql(MARK_ALL)
    assert (await bob.gql(HISTORY))["getNotificationHistory"]["unreadCount"] == 0
    org.live.clock.advance(1000)
    await ann.gql(ADD, {"c": "Later", "m": [to_bob]})
    assert (await bob.gql(HISTORY))["getNotificationHistory"]["unreadCount"] == 1


async def test_a_template_that_does_not_render_is_refused_with_its_line(org: Org) -> None:
    bob = await org.add_member("Bob")
    cases = {
        "Subject: Hi\n\nHello\n{% if %}": "line 4",  # a syntax error, on the body's line 4
        "Hi {{ config }}": "'config' is undefined",  # only the mail's values exist
        "Hi\n{{ ''.__class__.__mro__ }}": "line 2: SecurityError",
        "{{ person.name.format() }}": "SecurityError",
        "{{ 'x' * 100000 }}": "repetition",
        "{{ 9 ** 9 ** 9 }}": "power operator",
        "   ": "not blank",
    }
    for source, problem in cases.items():
        message = await org.admin.gql.error(TEMPLATE, {"t": source})
        assert message.startswith('Invalid argument "template"'), message
        assert problem in message, (source, message)
    ok = "Subject: {{ owner }} waits\n\n{{ owner }}: {{ period }}, {{ total }}"
    saved = (await org.admin.gql(TEMPLATE, {"t": ok}))[
        "editOrganisationEmailTemplateTimesheetSubmitted"]["emailTemplates"]
    assert saved["timesheetSubmitted"] == {"value": ok, "path": [{"id": org.id}]}
    # Only an administrator sets templates, even their own person's.
    assert await bob.gql.denied(PERSON_TEMPLATE, {"id": bob.id, "t": "Hi"}) == [
        "Mutation.editPersonEmailTemplateReminder"]


async def test_the_sign_in_mail_follows_the_organisations_template(org: Org) -> None:
    ann = await org.add_member("Ann")
    await org.admin.gql(SIGNIN_TEMPLATE, {"t": (
        "Subject: {{ organisation }} code {{ code }}\n\nHi {{ person.name }}: {{ code }} "
        "({{ minutes }} minutes)")})
    async with browser(org.live) as client:
        assert (await request_code(client, ann.email)).status_code == 200
    runtime = runtime_of(org)
    [row] = await wait_for(lambda: outbox_rows(runtime, ann.email), what="the sign-in mail")
    message = parse(row.raw)
    code = str(message["Subject"]).rsplit(" ", 1)[1]
    name = (await org.admin.gql("{ currentOrganisation { name } }"))["currentOrganisation"]
    assert message["Subject"] == f"{name['name']} code {code}" and code.isdigit()
    assert text_part(message).strip() == f"Hi Ann: {code} (5 minutes)"
