"""The access policy of moderation and editing in an inbox: who bans, unbans, adds or
removes members and hides messages, who sees the text of hidden messages, and who may edit a message and until
when. Clauses of ``inboxes.policies``, built on its staff roles, seats,
memberships and the posting rule."""
from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone
from django.utils.translation import gettext as _

from cities.models import HOST_STAFF_KIND

from .models import Inbox, MembershipState, Message
from .policies import (
    _is_authenticated,
    _is_finished,
    can_read_inbox,
    membership_of,
    post_denial_reason,
    seat_in,
    seat_may_post_kind,
    staff_roles_in,
)
from .policy_tables import kinds_of

#: How long after its receive time the author may edit a message.
EDIT_WINDOW = timedelta(minutes=10)


def can_moderate_inbox(user, inbox: Inbox) -> bool:
    """True when ``user`` may ban, unban, add or remove members and hide messages in ``inbox``.

    The inbox's organizer (the staff role that runs it, or the resident who organises it, e.g. a secret inbox,
    while that seat is still a member there) and the Procurator, each only where they may read (the Procurator never
    moderates a mafia or personal inbox he may not read). """
    if not can_read_inbox(user, inbox) or _is_finished(inbox):
        return False
    roles = staff_roles_in(user, inbox.game_id)
    if inbox.organizer_id is not None and any(r.pk == inbox.organizer_id for r in roles):
        return True
    if inbox.organizer_resident_id is not None:
        seat = seat_in(user, inbox.game_id)
        if seat is not None and seat.pk == inbox.organizer_resident_id and seat_may_post_kind(seat, inbox):
            membership = membership_of(user, inbox)
            if membership is not None and membership.state == MembershipState.MEMBER:
                return True
    return any(r.kind == HOST_STAFF_KIND for r in roles)


def can_see_hidden_text(user, inbox: Inbox) -> bool:
    """True when ``user`` sees the text of hidden messages in ``inbox``: its moderators."""
    return can_moderate_inbox(user, inbox)


def edit_denial_reason(user, message: Message, now: datetime | None = None) -> str | None:
    """Why ``user`` may not edit ``message`` at ``now`` (aware UTC), or None when they may.

    Only its author (the account that wrote it, ``author_user``: after a replacement the old player's posts are
    nobody's to edit), only while they may still post in the inbox (a ban stops edits too), only in discussion
    inboxes (not its ruleset's ``immutable_kinds``), only within ``EDIT_WINDOW`` of the receive time, never once hidden.
    Call for a readable inbox only (else the answer is a 404). One query at most (the membership, cached).
    """

    now = now or timezone.now()
    inbox = message.inbox
    if not _is_authenticated(user) or message.author_user_id != user.pk:
        return _("Only the author may edit a message.")
    if inbox.kind in kinds_of(inbox.game, "immutable_kinds"):
        return _("Messages in this inbox can never be edited.")
    if message.is_hidden:
        return _("A hidden message cannot be edited.")
    if now >= message.received_at + EDIT_WINDOW:
        return _("A message can be edited only within 10 minutes of posting.")
    return post_denial_reason(user, inbox, now)


def editable_positions(user, inbox: Inbox, messages: list[Message], first_position: int,
                       now: datetime | None = None) -> set[int]:
    """The 1-based thread positions, among ``messages`` (consecutive, the first at ``first_position``), of the
    messages ``user`` may edit now (``edit_denial_reason`` None). For the thread page's edit links; no query per
    message."""
    now = now or timezone.now()
    own = [(first_position + i, m) for i, m in enumerate(messages)
           if _is_authenticated(user) and m.author_user_id == user.pk]
    if not own:
        return set()
    for _position, m in own:
        m.inbox = inbox
    return {pos for pos, m in own if edit_denial_reason(user, m, now) is None}
