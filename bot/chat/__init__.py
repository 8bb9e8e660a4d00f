"""The chat front's platform-neutral core: what a chat does, written once (issue 42).

An adapter (bot/slack/, bot/teams/) turns its platform's requests into calls of these modules
and renders their neutral answers: blocks vs cards, slash commands vs bot commands, DMs vs
proactive messages. The core imports no adapter, and no adapter another
(tests/test_layering.py).

- `message`: `Message` (one-line `text`, `blocks` of text + `Action`s, `facts`), `Action`
  (`id`, `label`, `value`, `style`, `confirm`: `Confirm`, `url`), `reply(text)`.
  Slack: bot.slack.render.blocks_of; Teams: an Adaptive Card of the same.
- `markup`: `Markup` (escape outside text, show a moment); texts use `*bold*`. `PLAIN`.
- `person`: `ChatPerson` (organisation, person, name, e-mail, own API key, tz),
  `NotIdentified`, `not_known(email, how)` / `no_email(platform)` (how an unknown user links),
  `who_of` (quick entry's caller), `speaking` (their localisation, to put in force).
- `commands`: `CommandTable[H]`: sub-commands of `/time`, `/timesheet` (lookup, help).
- `quick_entry`: `QuickEntry(runtime, source=…)` answers each sub-command with a `Message`
  (`answer(person, command, text)`: the help when no sub-command; or the runs one by one)
  and the clicks (Undo, Edit, a candidate); `add_commands(table, adapt)` fills an adapter's
  table; `conversation()` the table of the runs themselves; `log_message(result)`.
- `approvals`: `Request` (what a decision button names; `encode`/`decode`), `APPROVE` /
  `REJECT`, `request_message`, `outcome_message`, `waiting_blocks`, `summary_text`,
  `period_text`, `request_of` (what a review request's or climbing reminder's buttons name),
  and the rules `outcome_for` (what a request message becomes after the
  service's approval event, whatever decided), `refusal_reason`, `may_try`; `ref_of` /
  `parse_ref` (the ref a sent request message is found by).
- `deciding`: `decide(runtime, claims, person, request, comment, who=, markup=)` as the
  person with their own key, once (`Claims`, table `slack_claims`), `approval_state`.
- `approve_all`: "Approve all (N)": `approve_all_block(requests)` (with its `Confirm`),
  `read_value`, `waits_for` (which named requests still wait for the clicker), `result_text`.
- `nudges`: `approver_nudge`, `digest` (with Approve all), `staff_nudge_text`,
  `submit_now_message` / `submit_value` ("Submit now"), `climb_message` (the climbing
  reminder to a manager or an administrator), `nudge_controls(card)` (snooze, off: the
  message's key in each value when given) with `control_value`, `control_change` (what a
  click stores), `control_text` (what the approver is told), `COMMAND_CHANGES` /
  `COMMAND_ANSWERS` (`/timesheet nudges on|off`): Slack's and Teams' alike.
- `nudge_schedule`: when staff and approvers are nudged, snoozes (`snoozed` on any
  adapter's stored `NudgeSetting`), the digest hour (pure).
- `home`: `read_home(runtime, person)` (`HomeFacts`, as the person) and
  `home_content(facts, markup)` (`HomeContent`: title, hours, status, time off, waiting).
- `away`: `note_away` records or clears an absence a chat status says (issue 28).
- `reach`: `reach(runtime, organisation, person, what)`: the person's localisation, or None
  when their settings say `what` is not sent to them in chat (push switch and language, one
  read).
- `linking`: `link_prompt` (what an unlinked user sees, "Link my account"), the form's words,
  `link_refusal`, `linked_text`.
- `values`: the guards reading what a click carries back (`BadValue`).
"""
