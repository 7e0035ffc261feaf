"""The M21 post hooks: the game thread's (M-VOTE: every post by a player is parsed for ``##VOTE``, ``##UNVOTE``,
``##END`` and ``##UNEND``; the post keeps its text and gets a receipt, and a hammer ends the day at once) and the
role PM's, where the Judge may give their orders to the hosts (M-ROLE judge: ``##CLOSE PROCEEDINGS``,
``##CASTING VOTE name`` or ``##CASTING VOTE No Lynch``)."""
from __future__ import annotations

import re

from cities.models import LifeStatus, Resident
from inboxes.hooks import PostHook, post_hook
from rulesets.m21.kinds import M21InboxKind
from kernel.errors import RuleViolation
from voting.parsing import is_forum_no_lynch, resolve_forum_name

from .day_services import (
    display_names,
    do_cast_judge_vote,
    do_close_proceedings,
    record_game_thread_post,
    renamed_receipt_lines,
)
from .models import M21PostReceipt
from .service_common import site_message

_CLOSE = re.compile(r"##\s*close\s+proceedings\b", re.IGNORECASE)
_CASTING = re.compile(r"##\s*casting\s+vote\s*:?\s*(?P<name>[^\n#]*)", re.IGNORECASE)


@post_hook(M21InboxKind.GAME_THREAD, ruleset="m21")
class GameThreadHook(PostHook):
    """Posts are never refused for their commands (M-VOTE-1: a refused command is explained in the receipt); the
    record step re-derives the day with the stored post (M-VOTE-8) in the post's transaction, with the open day's
    row locked, so that two hammers posted at once end the day once. The thread page shows the live vote count
    above the posts (M-VOTE-8) and each post's receipt beside it."""

    thread_head_template = "m21/_thread_head.html"
    receipt_template = "m21/_receipt.html"

    def record(self, inbox, seat, message, accepted, now) -> None:
        record_game_thread_post(inbox, seat, message, now)

    def annotate(self, inbox, messages) -> None:
        """Each shown post's receipt (M-VOTE-1), as ``receipt_lines``, and one name per seat (L-REPLACE-1): a post
        or a receipt naming a seat by an earlier name shows "New (replacing Old)" (``author_display``; receipts
        rewritten). Three queries for the whole page."""
        lines = dict(M21PostReceipt.objects.filter(message__in=[m.pk for m in messages])
                     .values_list("message_id", "lines"))
        names = display_names(inbox.game)
        for message in messages:
            if message.author_resident_id and message.author_name in names:
                message.author_display = names[message.author_name]
            message.receipt_lines = renamed_receipt_lines(lines.get(message.pk, []), names)


@post_hook(M21InboxKind.ROLE_PM, ruleset="m21")
class RolePmHook(PostHook):
    """The Judge's orders in their role PM (M-ROLE judge). The post is kept; the site answers in the PM with what
    the order did or why it was refused (a refusal changes nothing else). Posts by the hosts, and by players who
    are not the PM's owner, give no orders."""

    def record(self, inbox, seat, message, accepted, now) -> None:
        if seat is None or inbox.resident_id != seat.pk:
            return
        text = message.body
        if _CLOSE.search(text):
            answer = self._run(lambda: do_close_proceedings(inbox.game, acting_user=message.author_user, now=now))
        elif (match := _CASTING.search(text)) is not None:
            answer = self._casting(inbox, message, match.group("name").strip(), now)
        else:
            return
        site_message(inbox, answer, now)

    @staticmethod
    def _run(order) -> str:
        try:
            return order()
        except RuleViolation as exc:
            return f"Refused: {exc}"

    def _casting(self, inbox, message, written: str, now) -> str:
        if is_forum_no_lynch(written):
            target = None
        else:
            living = {r.name: r for r in Resident.objects.filter(game=inbox.game, status=LifeStatus.ALIVE)}
            resolution = resolve_forum_name(written, {name: [name] for name in living})
            if resolution.seat is None:
                listed = f": {', '.join(resolution.candidates)}" if resolution.candidates else ""
                return f"Refused: name exactly one living player (or No Lynch){listed}."
            target = living[resolution.seat]
        return self._run(lambda: do_cast_judge_vote(inbox.game, target, acting_user=message.author_user, now=now))
