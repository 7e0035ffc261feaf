"""Posting a message (DESIGN.md "services"): ``do_post_message`` (a service given the inbox) and
``do_post_message_by_id`` (the page's: the inbox read through the access policy under its row lock, one read).
Both are public in ``inboxes.services`` as well.
"""
from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from inboxes import policy_tables, viewer_reads
from kernel.audit import event_statement
from kernel.errors import InvalidInput, NotAllowed, WrongState
from kernel.live import note_new_messages, note_reads_changed
from kernel.prepared import PreparedInsert, execute_together
from kernel.rulesets import rule_id

from . import policies
from .hooks import post_hook_for
from .models import Inbox, Message
from .read_marks import read_mark_statement
from .rendering import has_visible_text, render_markdown
from .selectors import post_of_form_key, stale_post_form


@transaction.atomic
def do_post_message(inbox: Inbox, text: str, *, acting_user, now: datetime | None = None,
                    idempotency_key: str | None = None) -> Message:
    """Post ``text`` (Markdown) in ``inbox`` as ``acting_user``; the receive time is ``now`` (aware UTC, µs).

    ``idempotency_key`` (the post form's key): the same post again (a double click, a retry) returns the stored
    message, storing nothing; another text or inbox with the key is refused (``selectors.post_of_form_key``).

    The author is the user's seat in the game when they are a member, else their staff role there, else (a
    spectator) their account alone.
    Returns the Message. Raises, changing nothing:
    ``InvalidInput`` for empty or over-long text (``MAFIA_MESSAGE_MAX_LENGTH``); ``NotAllowed`` when the user
    may not read the inbox or may read but not post (banned), with the policy's reason;
    ``WrongState`` when the inbox is killed or the game is over; ``Inbox.DoesNotExist`` when it no longer
    exists. The post hook of the inbox's kind
    (``inboxes.hooks``) decides it first and may refuse it: in a voting inbox a resident's post may have to be a
    vote keyword or the nominee's last word, else it is refused with the tally's reason.
    """
    text = (text or "").strip()
    _check_text(text)
    body_html = render_markdown(text)  # pure: rendered before the inbox lock is taken
    # Lock the inbox row so that a kill or a ban racing with this post is seen either wholly before or after, and
    # decide on the inbox, the membership and the seat read once the lock is held, not on a page's cache: one
    # round trip, which also reads what the hook needs to decide the post (``PostHook.locked_reads``).
    if acting_user is None or not acting_user.is_authenticated:
        raise NotAllowed(_("No such inbox."))  # no post without an account
    known = (inbox.game.ruleset,) if Inbox.game.is_cached(inbox) else None  # else the seats' rulesets
    locked = viewer_reads.lock_for_post(acting_user, inbox.public_id, form_key=idempotency_key, rulesets=known)
    if locked is None:
        raise Inbox.DoesNotExist("No such inbox.")
    return _post(locked, text, body_html, acting_user=acting_user, now=now, idempotency_key=idempotency_key)


def do_post_message_by_id(inbox_id: str, text: str, *, acting_user, now: datetime | None = None,
                          idempotency_key: str | None = None) -> Message:
    """Post ``text`` in the inbox whose public id is ``inbox_id`` (a URL's), as ``do_post_message`` does, for a
    logged-in ``acting_user``: the inbox is locked and read, once, through the access policy
    (``policies.access_inbox_for_post``), as ``do_post_message`` reads it. Refusals are worded in the game's
    language. Returns the Message (``message.inbox`` is the inbox). Raises ``Http404`` for a malformed, missing or
    unreadable inbox (as the page does, whatever the text), else what ``do_post_message`` raises.

    The form's key (``idempotency_key``) is looked up once the lock is held, so the same form sent twice at once
    is answered with the first sending's message, as a re-submission is."""
    text = (text or "").strip()
    body_html = render_markdown(text) if _text_problem(text) is None else ""  # pure: before the lock
    with transaction.atomic():
        inbox = policies.access_inbox_for_post(acting_user, inbox_id, form_key=idempotency_key)
        with translation.override(inbox.game.language):
            _check_text(text)
            return _post(inbox, text, body_html, acting_user=acting_user, now=now, idempotency_key=idempotency_key)


def _text_problem(text: str) -> str | None:
    """Why the stripped ``text`` cannot be posted ("empty", "long"), or None."""
    if not has_visible_text(text):
        return "empty"
    return "long" if len(text) > settings.MAFIA_MESSAGE_MAX_LENGTH else None


def _check_text(text: str) -> None:
    problem = _text_problem(text)
    if problem == "empty":
        raise InvalidInput(_("The message is empty."))
    if problem == "long":
        raise InvalidInput(_("The message is too long: %(length)d characters, at most %(max)d.")
                           % {"length": len(text), "max": settings.MAFIA_MESSAGE_MAX_LENGTH})


def _post(inbox: Inbox, text: str, body_html: str, *, acting_user, now: datetime | None,
          idempotency_key: str | None) -> Message:
    """The post itself, in the caller's transaction, which holds the row lock of ``inbox`` (read under it,
    ``lock_for_post``)."""
    hook = post_hook_for(inbox)  # the ruleset's rule for this inbox kind (a vote, a ballot), inboxes.hooks
    # The receive time is read once the lock is held, so a close that locks the inbox first is wholly before this
    # post (its cut-off is earlier than the receive time).
    now = now or timezone.now()
    if inbox.form_key_message_id is not None:  # the form was posted already: answered with its message
        return post_of_form_key(acting_user, inbox, text, idempotency_key)
    if not policies.can_read_inbox(acting_user, inbox):
        raise NotAllowed(_("No such inbox."))
    reason = policies.post_denial_reason(acting_user, inbox, now)
    if reason is not None:
        if inbox.killed_at is not None or inbox.rolled_over_at is not None or inbox.game.is_finished:
            raise WrongState(reason, rule=rule_id(inbox.game, "inbox_moderation"))
        raise NotAllowed(reason, rule=rule_id(inbox.game, "inbox_ban"))
    seat = policies.seat_in(acting_user, inbox.game_id)
    author_resident = None
    author_staff = None
    if seat is not None and policies.membership_of(acting_user, inbox) is not None:
        author_resident = seat
        author_name = seat.name
    else:
        grants = [r for r in policies.staff_roles_in(acting_user, inbox.game_id)
                  if any(g.post and g.inbox_kind == inbox.kind and (not g.own_city or r.city_id == inbox.city_id)
                         for g in policies.staff_grants_of(inbox.game.ruleset, r.kind))]
        grants += [r for r in policies.staff_roles_in(acting_user, inbox.game_id)
                   if r.pk == inbox.organizer_id
                   and inbox.kind in policy_tables.kinds_of(inbox.game, "organized_kinds")]  # a staff organizer
        grants += policies.conditional_grant_roles(acting_user, inbox, post=True)  # the Arbiter
        author_staff = grants[0] if grants else None  # none: a spectator posts as their account
        author_name = acting_user.public_name  # the page adds the role, in the reader's language
    accepted = hook.check(inbox, author_resident, text, now) if hook is not None else None
    message = Message(
        pk=getattr(inbox, "next_message_id", None),  # reserved under the lock (PostgreSQL), else None
        inbox=inbox, author_user=acting_user, author_resident=author_resident, author_staff=author_staff,
        author_name=author_name, body=text, body_html=body_html, received_at=now,
        idempotency_key=idempotency_key or None)
    try:  # the same key posted at once in another inbox meets the unique constraint; the whole post rolls back
        insert = _INSERT_MESSAGE.statement(message) if message.pk is not None else None
        if insert is None:  # no id reserved (SQLite, an in-process library): the row is written first
            _INSERT_MESSAGE(message)
            statements = []
        else:
            statements = [insert]
        # The message (when its id was reserved), the poster's read mark, the audit row and the hook's rows
        # (a standing vote): one round trip, none of their results needed but the last one's row count.
        statements.append(read_mark_statement(acting_user, inbox, now))
        audit = event_statement(inbox.game, "message.posted", actor=acting_user, at=now,
                                payload={"inbox": inbox.pk, "message": message.pk})
        if audit is not None:
            statements.append(audit)
        writes = hook.writes(inbox, author_resident, message, accepted, now) if hook is not None else None
        if writes is not None:
            statements.extend(writes.statements)
        changed = execute_together(statements)
    except IntegrityError:
        raise stale_post_form(inbox.game) from None
    message._state.adding, message._state.db = False, "default"
    note_new_messages([inbox.pk])
    note_reads_changed(acting_user.pk)  # the poster's read mark moved
    if writes is not None and writes.refusal is not None and not changed:
        raise writes.refusal
    if hook is not None and writes is None:
        hook.record(inbox, author_resident, message, accepted, now)
    return message


_INSERT_MESSAGE = PreparedInsert(Message)
