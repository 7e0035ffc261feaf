"""State changes of inboxes: creation, posting, memberships, read marks (DESIGN.md "services").

Each service runs in one transaction, asks ``inboxes.policies`` before acting, writes a ``GameEvent`` row and
raises a ``RuleViolation`` subclass with a player-readable message, changing nothing, when refused.
"""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from cities.errors import InvalidInput, NotAllowed, WrongState
from cities.models import Game, Resident, StaffRole
from cities.services import record_event

from . import policies
from .models import Inbox, Membership, MembershipState, Message, ReadMark
from .rendering import has_visible_text, render_markdown


@transaction.atomic
def do_create_inbox(game: Game, kind: str, *, title: str, acting_user, city=None, organizer: StaffRole | None = None,
                    resident: Resident | None = None, members: Iterable[Resident] = (),
                    banned: Iterable[Resident] = (), now: datetime | None = None) -> Inbox:
    """Create an inbox of ``kind`` with ``members`` (post) and ``banned`` (read only) seats (L-INBOX).

    Only the site's own setup and workflows create inboxes today (``acting_user`` None); staff-created kinds
    (stage, secret) get their own services with their own checks. Returns the Inbox.
    """
    now = now or timezone.now()
    if acting_user is not None:
        raise NotAllowed(_("Inboxes of this kind are created by the site."))
    inbox = Inbox.objects.create(game=game, kind=kind, title=title.strip(), city=city, organizer=organizer,
                                 resident=resident, created_at=now, day_number=game.day_number)
    rows = [Membership(inbox=inbox, resident=r, state=MembershipState.MEMBER, since=now) for r in members]
    rows += [Membership(inbox=inbox, resident=r, state=MembershipState.BANNED, since=now) for r in banned]
    Membership.objects.bulk_create(rows)
    record_event(game, "inbox.created", actor=acting_user, at=now,
                 payload={"inbox": inbox.pk, "kind": kind, "members": len(rows)})
    return inbox


@transaction.atomic
def do_post_message(inbox: Inbox, text: str, *, acting_user, now: datetime | None = None) -> Message:
    """Post ``text`` (Markdown) in ``inbox`` as ``acting_user``; the receive time is ``now`` (aware UTC, µs).

    The author is the user's seat in the game when they are a member, else their staff role there.
    Returns the Message. Raises, changing nothing:
    ``InvalidInput`` for empty or over-long text (``MAFIA_MESSAGE_MAX_LENGTH``); ``NotAllowed`` when the user
    may not read the inbox or may read but not post (banned, L-INBOX-17/18), with the policy's reason;
    ``WrongState`` when the inbox is killed or the game is over.
    """
    now = now or timezone.now()
    text = (text or "").strip()
    if not has_visible_text(text):
        raise InvalidInput(_("The message is empty."))
    limit = settings.MAFIA_MESSAGE_MAX_LENGTH
    if len(text) > limit:
        raise InvalidInput(_("The message is too long: %(length)d characters, at most %(max)d.")
                           % {"length": len(text), "max": limit})
    # Lock the inbox row so that a kill or a ban racing with this post is seen either wholly before or after.
    inbox = Inbox.objects.select_for_update().select_related("game").get(pk=inbox.pk)
    policies.forget_viewer_cache(acting_user)  # decide on rows read under the lock, not a page's cache
    if not policies.can_read_inbox(acting_user, inbox):
        raise NotAllowed(_("No such inbox."))
    reason = policies.post_denial_reason(acting_user, inbox, now)
    if reason is not None:
        if inbox.killed_at is not None or inbox.game.is_finished:
            raise WrongState(reason, rule="L-INBOX")
        raise NotAllowed(reason, rule="L-INBOX-17")
    seat = policies.seat_in(acting_user, inbox.game_id)
    author_resident = None
    author_staff = None
    if seat is not None and policies.membership_of(acting_user, inbox) is not None:
        author_resident = seat
        author_name = seat.name
    else:
        grants = [r for r in policies.staff_roles_in(acting_user, inbox.game_id)
                  if any(g.post and g.inbox_kind == inbox.kind and (not g.own_city or r.city_id == inbox.city_id)
                         for g in policies.STAFF_GRANTS.get(r.kind, ()))]
        author_staff = grants[0]
        author_name = acting_user.public_name  # the page adds the role, in the reader's language
    message = Message.objects.create(
        inbox=inbox, author_user=acting_user, author_resident=author_resident, author_staff=author_staff,
        author_name=author_name, body=text, body_html=render_markdown(text), received_at=now,
    )
    _advance_read_mark(acting_user, inbox, now)
    record_event(inbox.game, "message.posted", actor=acting_user, at=now,
                 payload={"inbox": inbox.pk, "message": message.pk})
    return message


def _advance_read_mark(user, inbox: Inbox, up_to: datetime) -> None:
    mark = ReadMark.objects.select_for_update().filter(user=user, inbox=inbox).first()
    if mark is None:
        try:
            with transaction.atomic():
                ReadMark.objects.create(user=user, inbox=inbox, last_read_at=up_to)
            return
        except IntegrityError:  # another tab created it meanwhile
            mark = ReadMark.objects.select_for_update().get(user=user, inbox=inbox)
    if mark.last_read_at < up_to:
        mark.last_read_at = up_to
        mark.save(update_fields=["last_read_at"])


@transaction.atomic
def do_mark_inbox_read(inbox: Inbox, *, acting_user, up_to: datetime) -> None:
    """Record that ``acting_user`` has read ``inbox`` up to ``up_to`` (the receive time of the newest message
    they were shown, aware UTC). A read mark never moves back. Not audited: it is the reader's own state.
    Raises ``NotAllowed`` when the user may not read the inbox.
    """
    if not policies.can_read_inbox(acting_user, inbox) or not acting_user.is_authenticated:
        raise NotAllowed(_("No such inbox."))
    _advance_read_mark(acting_user, inbox, up_to)


def _moderated_membership(inbox: Inbox, resident: Resident, acting_user) -> Membership:
    if not policies.can_moderate_inbox(acting_user, inbox):
        raise NotAllowed(_("Only the organizer of this inbox or the Procurator may change its members."), rule="L-INBOX")
    if resident.game_id != inbox.game_id:
        raise InvalidInput(_("%(name)s is not a resident of this game.") % {"name": resident.name})
    membership = Membership.objects.select_for_update().filter(inbox=inbox, resident=resident).first()
    if membership is None:
        raise InvalidInput(_("%(name)s is not in this inbox.") % {"name": resident.name})
    return membership


@transaction.atomic
def do_ban_member(inbox: Inbox, resident: Resident, *, acting_user, until: datetime | None = None,
                  reason: str = "", now: datetime | None = None) -> Membership:
    """Ban ``resident`` in ``inbox``: they keep reading but cannot post (L-INBOX-17), until ``until`` (aware UTC,
    future) or for good when None (L-INBOX-18). Organizer or Procurator only. Returns the membership.
    Raises ``NotAllowed``, ``InvalidInput`` (not a member, past end time) or ``WrongState`` (already removed).
    """
    now = now or timezone.now()
    membership = _moderated_membership(inbox, resident, acting_user)
    if membership.state == MembershipState.REMOVED:
        raise WrongState(_("%(name)s was removed from this inbox.") % {"name": resident.name})
    if until is not None and until <= now:
        raise InvalidInput(_("The end of the ban must be in the future."), rule="L-INBOX-18")
    membership.state = MembershipState.BANNED
    membership.banned_until = until
    membership.reason = (reason or "").strip()[:300]
    membership.since = now
    membership.save(update_fields=["state", "banned_until", "reason", "since"])
    record_event(inbox.game, "membership.banned", actor=acting_user, at=now,
                 payload={"inbox": inbox.pk, "resident": resident.pk, "until": until.isoformat() if until else None})
    return membership


@transaction.atomic
def do_unban_member(inbox: Inbox, resident: Resident, *, acting_user, now: datetime | None = None) -> Membership:
    """Lift a ban of ``resident`` in ``inbox`` (they post again). Organizer or Procurator only.
    Raises ``NotAllowed``, ``InvalidInput`` (not in the inbox) or ``WrongState`` (not banned)."""
    now = now or timezone.now()
    membership = _moderated_membership(inbox, resident, acting_user)
    if membership.state != MembershipState.BANNED:
        raise WrongState(_("%(name)s is not banned here.") % {"name": resident.name})
    membership.state = MembershipState.MEMBER
    membership.banned_until = None
    membership.reason = ""
    membership.since = now
    membership.save(update_fields=["state", "banned_until", "reason", "since"])
    record_event(inbox.game, "membership.unbanned", actor=acting_user, at=now,
                 payload={"inbox": inbox.pk, "resident": resident.pk})
    return membership


@transaction.atomic
def do_add_member(inbox: Inbox, resident: Resident, *, acting_user, now: datetime | None = None) -> Membership:
    """Make ``resident`` a member of ``inbox`` (or a member again after removal). Organizer or Procurator only.
    Raises ``NotAllowed``, ``InvalidInput`` (another game, already a member) or ``WrongState`` (inbox killed)."""
    now = now or timezone.now()
    if not policies.can_moderate_inbox(acting_user, inbox):
        raise NotAllowed(_("Only the organizer of this inbox or the Procurator may change its members."), rule="L-INBOX")
    if resident.game_id != inbox.game_id:
        raise InvalidInput(_("%(name)s is not a resident of this game.") % {"name": resident.name})
    if inbox.killed_at is not None:
        raise WrongState(_("This inbox is closed."))
    membership = Membership.objects.select_for_update().filter(inbox=inbox, resident=resident).first()
    if membership is not None and membership.state != MembershipState.REMOVED:
        raise InvalidInput(_("%(name)s is already in this inbox.") % {"name": resident.name})
    if membership is None:
        membership = Membership.objects.create(inbox=inbox, resident=resident, state=MembershipState.MEMBER, since=now)
    else:
        membership.state = MembershipState.MEMBER
        membership.since = now
        membership.save(update_fields=["state", "since"])
    record_event(inbox.game, "membership.added", actor=acting_user, at=now,
                 payload={"inbox": inbox.pk, "resident": resident.pk})
    return membership


@transaction.atomic
def do_remove_member(inbox: Inbox, resident: Resident, *, acting_user, now: datetime | None = None) -> Membership:
    """Remove ``resident`` from ``inbox``: they no longer see it at all, not even its title (L-INBOX-17).
    Organizer or Procurator only. Raises ``NotAllowed``, ``InvalidInput`` or ``WrongState`` (already removed)."""
    now = now or timezone.now()
    membership = _moderated_membership(inbox, resident, acting_user)
    if membership.state == MembershipState.REMOVED:
        raise WrongState(_("%(name)s was already removed from this inbox.") % {"name": resident.name})
    membership.state = MembershipState.REMOVED
    membership.banned_until = None
    membership.since = now
    membership.save(update_fields=["state", "banned_until", "since"])
    record_event(inbox.game, "membership.removed", actor=acting_user, at=now,
                 payload={"inbox": inbox.pk, "resident": resident.pk})
    return membership


@transaction.atomic
def do_post_site_message(inbox: Inbox, text: str, *, acting_user, now: datetime | None = None) -> Message:
    """Post ``text`` in ``inbox`` as the site itself (author "Mafia Host"), e.g. the draw's lists in the notary
    inbox (L-ASSIGN-1) or an answer in the check channel. Only the site may (``acting_user`` must be None).
    Raises ``NotAllowed`` for any user and ``InvalidInput`` for empty text; ``WrongState`` when killed."""
    now = now or timezone.now()
    if acting_user is not None:
        raise NotAllowed(_("Only the site posts as the site."))
    text = (text or "").strip()
    if not text:
        raise InvalidInput(_("The message is empty."))
    if inbox.killed_at is not None:
        raise WrongState(_("This inbox is closed."))
    message = Message.objects.create(inbox=inbox, author_name="Mafia Host", body=text,
                                     body_html=render_markdown(text), received_at=now)
    record_event(inbox.game, "message.site_posted", actor=None, at=now, payload={"inbox": inbox.pk, "message": message.pk})
    return message


@transaction.atomic
def do_add_member_by_site(inbox: Inbox, resident: Resident, *, acting_user, now: datetime | None = None) -> Membership:
    """Make ``resident`` a member of ``inbox`` on the site's own authority: a workflow's consequence, such as
    a new commissar joining the police station (L-COMM-4). Only the site may (``acting_user`` must be None).
    Raises ``NotAllowed`` for any user, ``InvalidInput`` (another game, already a member), ``WrongState`` (killed)."""
    now = now or timezone.now()
    if acting_user is not None:
        raise NotAllowed(_("Only the site adds members this way."))
    if resident.game_id != inbox.game_id:
        raise InvalidInput(_("%(name)s is not a resident of this game.") % {"name": resident.name})
    if inbox.killed_at is not None:
        raise WrongState(_("This inbox is closed."))
    membership = Membership.objects.select_for_update().filter(inbox=inbox, resident=resident).first()
    if membership is not None and membership.state != MembershipState.REMOVED:
        raise InvalidInput(_("%(name)s is already in this inbox.") % {"name": resident.name})
    if membership is None:
        membership = Membership.objects.create(inbox=inbox, resident=resident, state=MembershipState.MEMBER, since=now)
    else:
        membership.state = MembershipState.MEMBER
        membership.since = now
        membership.save(update_fields=["state", "since"])
    policies.forget_viewer_cache(resident.user)
    record_event(inbox.game, "membership.added", actor=None, at=now, payload={"inbox": inbox.pk, "resident": resident.pk})
    return membership
