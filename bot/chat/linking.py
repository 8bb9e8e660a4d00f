"""Linking a chat user to a person of the service with their OWN API key, platform-neutral:
the prompt an unlinked user gets (their `NotIdentified` message, and "Link my account" when
linking would help), the form asking for the key, and what its submission answers.

The adapter shows the prompt (`link_prompt`), opens its form (Slack: a modal; Teams: a card
with an input) on LINK_ACTION or its link command, checks the key against the user's platform
e-mail (bot.slack.identity.Identity.link: the directory links only a key whose person has that
e-mail) and answers `linked_text(person)` or the form's error `link_refusal(error)`.
"""

from __future__ import annotations

from bot.chat.message import Action, Block, Message
from bot.chat.person import ChatPerson, NotIdentified
from timebot.errors import InvalidCredentials

LINK_ACTION = "timebot_link_open"
LINK_BUTTON = "Link my account"
FORM_TITLE = "Link your account"
FORM_SUBMIT = "Link"
FORM_CANCEL = "Cancel"
FORM_TEXT = ("Paste your own API key of the time tracking service. timebot checks it, "
             "stores it encrypted, and acts only as you with it.")
FORM_LABEL = "API key"
NO_KEY = "Paste your API key."


def link_prompt(message: str, can_link: bool) -> Message:
    """What an unlinked user is told (`message`, plain), with "Link my account" when linking
    their own key would help."""
    actions = (Action(LINK_ACTION, LINK_BUTTON),) if can_link else ()
    return Message(message, (Block(message, actions, plain=True),), plain=True)


def link_refusal(error: Exception) -> str:
    """The form's error for a key that could not be linked (InvalidCredentials: the service
    does not know it; NotIdentified, a service refusal: what they say)."""
    if isinstance(error, InvalidCredentials):
        return "The time tracking service does not know this key."
    if isinstance(error, NotIdentified):
        return error.message[:150]
    return str(error)[:150]


def linked_text(person: ChatPerson) -> str:
    """The answer once linked (plain)."""
    return (f"Linked: you are {person.name} ({person.email}) in the time tracking service. "
            "I act only as you.")
