"""What a chat message says, whatever renders it.

A `Message` is the one-line `text` (the notification, the fallback a client shows where it
cannot render more) and its `blocks`: each a text in the chat markup (bot.chat.markup) or
plain (`plain=True`: shown as typed, the adapter escapes it), and the actions a person can take
under it. `facts` say what the message is about (person, period, stage, hours) for a renderer
that shows them as such (an Adaptive Card's FactSet); Slack shows the blocks' texts, which say
the same.

An `Action` is a button: `id` is what a click names back (the neutral modules name theirs:
bot.chat.approvals APPROVE / REJECT, bot.chat.quick_entry UNDO / EDIT / PICK_<n>,
bot.chat.approve_all APPROVE_ALL), `value` what it carries (a string
timebot wrote, read back with bot.chat.values' guards), `style` primary / danger, `confirm` a
dialog asked before the click counts ("Approve all (N)"), `url` a link instead of a click.

Renderers: bot.slack.render.blocks_of (Block Kit). A Teams adapter renders the same to an
Adaptive Card: a block's text as a TextBlock, its actions as Action.Submit (data: `id`,
`value`) or Action.OpenUrl, `confirm` as a card asking before the submit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Style = Literal["primary", "danger"]


@dataclass(frozen=True)
class Confirm:
    """Asked before an action counts: a title, a question, the yes and the no."""

    title: str
    text: str
    yes: str
    no: str
    style: Style | None = None


@dataclass(frozen=True)
class Action:
    """A button: what it says, what a click names (`id`, `value`), or where it leads (`url`)."""

    id: str
    label: str
    value: str = ""
    style: Style | None = None
    confirm: Confirm | None = None
    url: str | None = None


@dataclass(frozen=True)
class Block:
    """A text, and the actions under it (`group` names them together: Slack's block_id)."""

    text: str = ""
    actions: tuple[Action, ...] = ()
    plain: bool = False
    group: str | None = None


FactKind = Literal["person", "period", "stage", "hours", "status"]


@dataclass(frozen=True)
class Fact:
    """What a message is about: which fact (the renderer words its label in the reader's
    language) and its value, shown as typed."""

    kind: FactKind
    value: str


@dataclass(frozen=True)
class Message:
    """A message: its one-line text (plain when `plain`: shown as typed), its blocks, its
    facts."""

    text: str
    blocks: tuple[Block, ...] = ()
    facts: tuple[Fact, ...] = field(default=())
    plain: bool = False

    def actions(self) -> tuple[Action, ...]:
        """Every action of the message, in order."""
        return tuple(action for block in self.blocks for action in block.actions)


def reply(text: str) -> Message:
    """An answer that is only text, shown as typed."""
    return Message(text, plain=True)
