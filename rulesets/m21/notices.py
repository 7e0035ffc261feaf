"""How M21 words the notification of a message from the site in a player's role PM (RULES.md M-SETUP-4,
M-NIGHT-4): the role card is "your role", a night action's confirmation "your action was recorded", a prod "the
host prods you", a night's result stays "your night result". Pure: the message's opening says which it is; the
services that write those messages open them with these words."""
from __future__ import annotations

import re

#: How the role card opens (``setup_services.do_deal_m21_roles``).
ROLE_CARD_HEADING = "**Your role: "
#: How a prod opens (``host_tool_services.do_prod_m21_players``).
PROD_HEADING = "**A prod from the host.**"
#: How a night action's confirmation or withdrawal opens (``night_services``).
_ACTION_RECORDED = re.compile(r"^Night \d+: you(r action is | withdrew your action)")

NOTICE_TEXTS = {
    "role": "%(game)s: your role in “%(inbox)s”.",
    "action": "%(game)s: your action was recorded in “%(inbox)s”.",
    "prod": "%(game)s: the host prods you in “%(inbox)s”.",
}


def notice_of(body: str) -> str | None:
    """The notification text (a ``NOTICE_TEXTS`` value with ``%(game)s`` and ``%(inbox)s``) of a site message in
    a role PM whose text is ``body``, or None for the engine's own wording (a night result, anything else)."""
    if body.startswith(ROLE_CARD_HEADING):
        return NOTICE_TEXTS["role"]
    if body.startswith(PROD_HEADING):
        return NOTICE_TEXTS["prod"]
    if _ACTION_RECORDED.match(body):
        return NOTICE_TEXTS["action"]
    return None
