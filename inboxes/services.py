"""State changes of inboxes: creation, posting, memberships, read marks (DESIGN.md "services").

Each service runs in one transaction, asks ``inboxes.policies`` before acting, writes a ``GameEvent`` row and
raises a ``RuleViolation`` subclass with a player-readable message, changing nothing, when refused.
"""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from cities.i18n import in_game_language
from cities.models import HOST_STAFF_KIND, City, Game, GameEvent, GameStatus, LifeStatus, Resident, StaffRole
from cities.staff_kinds import host_label
from inboxes import moderation_policy, policy_tables, viewer_reads
from kernel.audit import record_event, record_events
from kernel.errors import InvalidInput, NotAllowed, WrongState
from kernel.rulesets import inbox_kind_label, rule_id, ruleset_of, seat_state_relations

from . import policies
from .models import (
    Inbox,
    Membership,
    MembershipState,
    Message,
)
from .rendering import render_markdown


def check_inbox_kind_exists(game: Game, kind: str) -> None:
    """Raise ``NotAllowed`` unless inboxes of ``kind`` exist in games of ``game``'s ruleset
    (``RulesetSpec.inbox_kinds``): a game whose ruleset has no secret inbox gets none, whoever asks. Every creation of an inbox
    goes through it."""
    if not ruleset_of(game).has_inbox_kind(kind):
        label = inbox_kind_label(kind, game)
        raise NotAllowed(_("This game has no inboxes of the kind “%(kind)s”: its rules do not provide them.")
                         % {"kind": label})


def kind_for(game: Game, role: str) -> str:
    """The kind of ``game``'s inboxes that play the neutral part ``role`` (``RulesetSpec.inbox_kind_for``). Raises
    ``NotAllowed`` when the game's ruleset has no such inboxes, ``ValueError`` for a role no ruleset maps."""
    kind = ruleset_of(game).inbox_kind_for(role)
    if kind is None:
        raise NotAllowed(_("This game's rules do not provide this inbox."))
    return kind


@transaction.atomic
def do_create_inbox(game: Game, kind: str, *, title: str, acting_user, city=None, organizer: StaffRole | None = None,
                    resident: Resident | None = None, members: Iterable[Resident] = (),
                    banned: Iterable[Resident] = (), now: datetime | None = None) -> Inbox:
    """Create an inbox of ``kind`` with ``members`` (post) and ``banned`` (read only) seats.

    Only the site's own setup and workflows create inboxes today (``acting_user`` None); staff-created kinds
    (stage, secret) get their own services with their own checks. Returns the Inbox.
    """
    now = now or timezone.now()
    if acting_user is not None:
        raise NotAllowed(_("Inboxes of this kind are created by the site."))
    check_inbox_kind_exists(game, kind)
    inbox = Inbox.objects.create(game=game, kind=kind, title=title.strip(), city=city, organizer=organizer,
                                 resident=resident, created_at=now, day_number=game.day_number)
    rows = [Membership(inbox=inbox, resident=r, state=MembershipState.MEMBER, since=now) for r in members]
    rows += [Membership(inbox=inbox, resident=r, state=MembershipState.BANNED, since=now) for r in banned]
    Membership.objects.bulk_create(rows)
    record_event(game, "inbox.created", actor=acting_user, at=now,
                 payload={"inbox": inbox.pk, "kind": kind, "members": len(rows)})
    return inbox


def _moderated_membership(inbox: Inbox, resident: Resident, acting_user) -> Membership:
    if not moderation_policy.can_moderate_inbox(acting_user, inbox):
        raise NotAllowed(_("Only the organizer of this inbox or the %(host)s of the game may change its members.")
                         % {"host": host_label(inbox.game)}, rule=rule_id(inbox.game, "inbox_moderation"))
    if resident.game_id != inbox.game_id:
        raise InvalidInput(_("%(name)s is not a resident of this game.") % {"name": resident.name})
    membership = Membership.objects.select_for_update().filter(inbox=inbox, resident=resident).first()
    if membership is None:
        raise InvalidInput(_("%(name)s is not in this inbox.") % {"name": resident.name})
    _check_seat_state_allows_moderation(inbox, resident)
    return membership


@transaction.atomic
def do_ban_member(inbox: Inbox, resident: Resident, *, acting_user, until: datetime | None = None,
                  reason: str = "", now: datetime | None = None) -> Membership:
    """Ban ``resident`` in ``inbox``: they keep reading but cannot post, until ``until`` (aware UTC,
    future) or for good when None. Organizer or Procurator only. Returns the membership.
    Raises ``NotAllowed``, ``InvalidInput`` (not a member, past end time) or ``WrongState`` (already removed).
    """
    now = now or timezone.now()
    membership = _moderated_membership(inbox, resident, acting_user)
    if membership.state == MembershipState.REMOVED:
        raise WrongState(_("%(name)s was removed from this inbox.") % {"name": resident.name})
    if until is not None and until <= now:
        raise InvalidInput(_("The end of the ban must be in the future."), rule=rule_id(inbox.game, "penalty_ban"))
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
    if not moderation_policy.can_moderate_inbox(acting_user, inbox):
        raise NotAllowed(_("Only the organizer of this inbox or the %(host)s of the game may change its members.")
                         % {"host": host_label(inbox.game)}, rule=rule_id(inbox.game, "inbox_moderation"))
    return _make_member(inbox, resident, actor=acting_user, now=now)


def _check_seat_state_allows_moderation(inbox: Inbox, resident: Resident) -> None:
    """Refuse any membership change (ban, unban, remove, add) of ``resident`` in ``inbox`` when the state of the
    seat forbids it to post there (``policies.seat_state_denial``: the dead in an inbox of the living, a spirit
    outside its voting inboxes, an imprisoned seat): its place there follows from its state, which no moderator's
    flag changes. Reads the seat fresh.
    Raises ``WrongState`` with a reason a moderator can read."""
    seat = Resident.objects.select_related(*seat_state_relations()).get(pk=resident.pk)
    if policies.seat_state_denial(seat, inbox) is not None:
        grant = policies.seat_state_grant(seat, inbox) if seat.status != LifeStatus.ALIVE else None
        if seat.status == LifeStatus.IMPRISONED:
            text = _("%(name)s is imprisoned: their place in this inbox follows from that, and no moderation "
                     "action changes it.")
        elif grant is not None:
            text = str(grant.moderation)
        else:
            text = _("%(name)s is dead: the dead have no voice in an inbox of the living, and no moderation "
                     "action changes their place in it.")
        raise WrongState(text % {"name": seat.name}, rule=rule_id(inbox.game, "dead_are_silent"))


def _ban_at_removal(inbox: Inbox, resident: Resident, now: datetime) -> tuple[bool, datetime | None]:
    """(banned, until) that the last removal of ``resident`` from ``inbox`` took away, read from its audit row:
    (True, end or None for good) when it removed a ban still running at ``now``, else (False, None). Adding
    them back must not lift the ban."""
    last = (GameEvent.objects.filter(game_id=inbox.game_id, kind="membership.removed", payload__inbox=inbox.pk,
                                     payload__resident=resident.pk).order_by("-at", "-id").first())
    payload = (last.payload or {}) if last is not None else {}
    if not payload.get("was_banned"):
        return False, None
    until = datetime.fromisoformat(payload["until"]) if payload.get("until") else None
    if until is not None and until <= now:
        return False, None
    return True, until


def _make_member(inbox: Inbox, resident: Resident, *, actor, now: datetime) -> Membership:
    """Add ``resident`` to ``inbox`` as a member (again, after a removal) and audit it; the caller has checked who
    may. A membership that was banned when removed comes back banned, with the ban's end if it is still ahead
    (remove + add back is no unban). Raises ``InvalidInput`` (another game, already in) or ``WrongState`` (inbox
    killed; the seat's state forbids posting there: the dead, spirits, the imprisoned)."""
    if resident.game_id != inbox.game_id:
        raise InvalidInput(_("%(name)s is not a resident of this game.") % {"name": resident.name})
    if inbox.killed_at is not None:
        raise WrongState(_("This inbox is closed."))
    _check_seat_state_allows_moderation(inbox, resident)
    membership = Membership.objects.select_for_update().filter(inbox=inbox, resident=resident).first()
    if membership is not None and membership.state != MembershipState.REMOVED:
        raise InvalidInput(_("%(name)s is already in this inbox.") % {"name": resident.name})
    if membership is None:
        membership = Membership.objects.create(inbox=inbox, resident=resident, state=MembershipState.MEMBER, since=now)
    else:
        banned, until = _ban_at_removal(inbox, resident, now)
        membership.state = MembershipState.BANNED if banned else MembershipState.MEMBER
        membership.banned_until = until
        membership.since = now
        membership.save(update_fields=["state", "banned_until", "since"])
    viewer_reads.forget_viewer_cache(resident.user)
    record_event(inbox.game, "membership.added", actor=actor, at=now,
                 payload={"inbox": inbox.pk, "resident": resident.pk, "banned": membership.state == MembershipState.BANNED})
    return membership


@transaction.atomic
def do_remove_member(inbox: Inbox, resident: Resident, *, acting_user, now: datetime | None = None) -> Membership:
    """Remove ``resident`` from ``inbox``: they no longer see it at all, not even its title.
    Organizer or Procurator only. Raises ``NotAllowed``, ``InvalidInput`` or ``WrongState`` (already removed)."""
    now = now or timezone.now()
    membership = _moderated_membership(inbox, resident, acting_user)
    if membership.state == MembershipState.REMOVED:
        raise WrongState(_("%(name)s was already removed from this inbox.") % {"name": resident.name})
    was_banned = membership.state == MembershipState.BANNED
    ban_end = membership.banned_until.isoformat() if was_banned and membership.banned_until else None
    membership.state = MembershipState.REMOVED
    membership.banned_until = None
    membership.since = now
    membership.save(update_fields=["state", "banned_until", "since"])
    record_event(inbox.game, "membership.removed", actor=acting_user, at=now,
                 payload={"inbox": inbox.pk, "resident": resident.pk, "was_banned": was_banned, "until": ban_end})
    return membership


@transaction.atomic
def do_post_site_message(inbox: Inbox, text: str, *, acting_user, now: datetime | None = None) -> Message:
    """Post ``text`` in ``inbox`` as the site itself (author "Mafia Host"), e.g. the draw's lists in the notary
    inbox or an answer in the check channel. Only the site may (``acting_user`` must be None).
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


# ==============================================================================================================
# Inbox lifecycle : the standing inboxes of a game, rollover, killing, secret and stage inboxes
# ==============================================================================================================

def _is_procurator(user, game: Game) -> bool:
    return user is not None and policies.holds_role(user, game, HOST_STAFF_KIND)


def check_site_or_procurator(game: Game, acting_user, rule: str) -> None:
    """Raise ``NotAllowed`` unless ``acting_user`` is None (the site) or the Procurator of ``game``; the refusal
    cites the ID the game's ruleset gives the neutral rule key ``rule`` (``kernel.rulesets.rule_id``)."""
    if acting_user is not None and not _is_procurator(acting_user, game):
        raise NotAllowed(_("Only the %(host)s of this game may do this.") % {"host": host_label(game)},
                         rule=rule_id(game, rule))


def check_not_finished(game: Game) -> None:
    """Raise ``WrongState`` once ``game`` is over: no inbox changes then."""
    if game.status == GameStatus.FINISHED:
        raise WrongState(_("The game is over."))


def _clean_title(title: str) -> str:
    title = (title or "").strip()
    if not title:
        raise InvalidInput(_("The title is empty."))
    if len(title) > 200:
        raise InvalidInput(_("The title is too long: %(length)d characters, at most %(max)d.")
                           % {"length": len(title), "max": 200})
    return title


def write_proxy_message(inbox: Inbox, resident: Resident, text: str, *, at: datetime) -> Message:
    """Write the message of a proxy vote or ballot in ``resident``'s name, received at ``at`` (the opening time): the
    site casts what the resident asked for. A building block of the rulesets' services (callers checked the rules and
    hold the transaction). Returns the Message."""
    return Message.objects.create(inbox=inbox, author_resident=resident, author_user=resident.user,
                                  author_name=resident.name, body=text, body_html=render_markdown(text),
                                  received_at=at)


def ensure_member(inbox: Inbox, resident: Resident, *, now: datetime) -> None:
    """Make ``resident`` a member of ``inbox`` unless they already have a membership there (any state), without an
    audit row of its own: the caller's event records why (a removal demand's confirmer joins its inbox).
    Callers checked the rules and hold the transaction."""
    if not Membership.objects.filter(inbox=inbox, resident=resident).exists():
        Membership.objects.create(inbox=inbox, resident=resident, since=now)


def new_inbox(game: Game, kind: str, *, title: str, actor, now: datetime, city: City | None = None,
               organizer: StaffRole | None = None, organizer_resident: Resident | None = None,
               resident: Resident | None = None, members: Iterable[Resident] = (), banned: Iterable = (),
               predecessor: Inbox | None = None, idempotency_key: str | None = None) -> Inbox:
    """Create one inbox and its memberships, and audit it; returns the Inbox. ``banned`` holds residents or
    (resident, until, reason) triples. A building block of the services of the inboxes and of the rulesets
    (voting inboxes, precincts, removal demands): callers have checked the rules and hold the transaction.
    ``idempotency_key``: the key of the form that asked for it (a secret inbox), unique per game. Raises
    ``NotAllowed`` for a kind the game's ruleset does not have (``check_inbox_kind_exists``)."""
    check_inbox_kind_exists(game, kind)
    inbox = Inbox.objects.create(game=game, kind=kind, title=title, city=city, organizer=organizer,
                                 organizer_resident=organizer_resident, resident=resident, created_at=now,
                                 day_number=game.day_number, predecessor=predecessor,
                                 idempotency_key=idempotency_key)
    rows = [Membership(inbox=inbox, resident=r, state=MembershipState.MEMBER, since=now) for r in members]
    for item in banned:
        r, until, reason = item if isinstance(item, tuple) else (item, None, "")
        rows.append(Membership(inbox=inbox, resident=r, state=MembershipState.BANNED, since=now,
                               banned_until=until, reason=reason))
    Membership.objects.bulk_create(rows)
    record_event(game, "inbox.created", actor=actor, at=now,
                 payload={"inbox": inbox.pk, "kind": kind, "members": len(rows),
                          "predecessor": predecessor.pk if predecessor else None})
    return inbox


def current_inboxes(game: Game, kind: str):
    """Inboxes of ``kind`` in ``game`` that are not rolled over (the live end of each chain): a queryset."""
    return Inbox.objects.filter(game=game, kind=kind, rolled_over_at__isnull=True)


def _is_organizer(user, inbox: Inbox) -> bool:
    """True when ``user`` runs ``inbox``: holds its organizer staff role, or holds the organizing seat while that
    seat is still a member there."""
    if user is None:
        return False
    if inbox.organizer_id is not None and any(r.pk == inbox.organizer_id for r in policies.staff_roles_in(user, inbox.game_id)):
        return True
    if inbox.organizer_resident_id is not None:
        seat = policies.seat_in(user, inbox.game_id)
        membership = policies.membership_of(user, inbox)
        return (seat is not None and seat.pk == inbox.organizer_resident_id and membership is not None
                and membership.state == MembershipState.MEMBER)
    return False


def _roll_over(inbox: Inbox, *, actor, now: datetime, title: str) -> Inbox:
    """The rollover itself, for a locked, open ``inbox``; see ``do_roll_over_inbox``."""
    return roll_over_many([(inbox, title)], actor=actor, now=now)[0]


def roll_over_many(pairs: list[tuple[Inbox, str]], *, actor, now: datetime) -> list[Inbox]:
    """Roll over locked, open inboxes of one game, each ``(inbox, new title)``, as ``_roll_over`` does one, in a
    number of statements that does not grow with the number of inboxes. Returns the new inboxes, in order."""
    if not pairs:
        return []
    old_ids = [inbox.pk for inbox, _title in pairs]
    keeps_dead = policy_tables.kinds_of(pairs[0][0].game, "rollover_keeps_dead_kinds")
    rows_of: dict[int, list[Membership]] = {pk: [] for pk in old_ids}
    for m in (Membership.objects.select_for_update(of=("self",)).filter(inbox_id__in=old_ids).select_related("resident")
              .order_by("id")):
        rows_of[m.inbox_id].append(m)
    Inbox.objects.filter(pk__in=old_ids).update(rolled_over_at=now)
    Membership.objects.filter(inbox_id__in=old_ids).exclude(state=MembershipState.REMOVED).update(
        state=MembershipState.BANNED, banned_until=None, since=now)
    created = Inbox.objects.bulk_create([
        Inbox(game_id=inbox.game_id, kind=inbox.kind, title=title, city_id=inbox.city_id,
              organizer_id=inbox.organizer_id, organizer_resident_id=inbox.organizer_resident_id,
              resident_id=inbox.resident_id, created_at=now, day_number=inbox.game.day_number, predecessor=inbox)
        for inbox, title in pairs])
    rows, events = [], []
    for (inbox, _title), new in zip(pairs, created, strict=True):
        inbox.rolled_over_at = now
        members, banned = [], []
        for m in rows_of[inbox.pk]:
            if m.state == MembershipState.REMOVED:
                continue
            if m.state == MembershipState.BANNED and (m.banned_until is None or m.banned_until > now):
                banned.append(Membership(inbox=new, resident_id=m.resident_id, state=MembershipState.BANNED,
                                         since=now, banned_until=m.banned_until, reason=m.reason))
            elif m.resident.status != LifeStatus.ALIVE and inbox.kind not in keeps_dead:
                banned.append(Membership(inbox=new, resident_id=m.resident_id, state=MembershipState.BANNED,
                                         since=now))
            else:
                members.append(Membership(inbox=new, resident_id=m.resident_id, state=MembershipState.MEMBER,
                                          since=now))
        rows += members + banned
        events += [("inbox.created", {"inbox": new.pk, "kind": new.kind, "members": len(members) + len(banned),
                                      "predecessor": inbox.pk}),
                   ("inbox.rolled_over", {"inbox": inbox.pk, "successor": new.pk, "kind": inbox.kind})]
    Membership.objects.bulk_create(rows)
    record_events(pairs[0][0].game, events, actor=actor, at=now)
    return created


def _lock_open_inbox(inbox: Inbox) -> Inbox:
    inbox = Inbox.objects.select_for_update(of=("self",)).select_related("game", "city", "organizer").get(pk=inbox.pk)
    check_not_finished(inbox.game)
    if inbox.killed_at is not None:
        raise WrongState(_("This inbox is closed."), rule=rule_id(inbox.game, "inbox_moderation"))
    if inbox.rolled_over_at is not None:
        raise WrongState(_("This inbox was already rolled over."), rule=rule_id(inbox.game, "inbox_moderation"))
    return inbox


def _chain_root_title_and_length(inbox: Inbox) -> tuple[str, int]:
    length, root = 1, inbox
    while root.predecessor_id is not None:
        root = Inbox.objects.only("id", "title", "predecessor_id").get(pk=root.predecessor_id)
        length += 1
    return root.title, length


@transaction.atomic
def do_roll_over_inbox(inbox: Inbox, *, acting_user, title: str | None = None, now: datetime | None = None) -> Inbox:
    """Roll a heavy ``inbox`` over: a new inbox of the same kind, city, organizer and
    subject with all current members (the dead banned, running bans carried over with their end); in the old one
    everyone is banned and it is marked ``rolled_over_at``; ``new.predecessor`` is the old inbox.

    By the organizer of the inbox (its staff role, or the organizing resident while a member) or the site
    (``acting_user`` None). ``title`` defaults to the first inbox's title with ", part N". Returns the new Inbox.
    Raises ``NotAllowed`` (unreadable: "No such inbox."; readable but not the organizer), ``InvalidInput``
    (voting inboxes and precincts, bad title) or ``WrongState`` (killed, already rolled over, game over).
    """
    now = now or timezone.now()
    if acting_user is not None:
        viewer_reads.forget_viewer_cache(acting_user)
        if not policies.can_read_inbox(acting_user, inbox):
            raise NotAllowed(_("No such inbox."))
        if not _is_organizer(acting_user, inbox):
            raise NotAllowed(_("Only the organizer of this inbox may roll it over."),
                             rule=rule_id(inbox.game, "inbox_moderation"))
    if inbox.kind in policy_tables.kinds_of(inbox.game, "no_rollover_kinds"):
        raise InvalidInput(_("Voting inboxes and precincts are never rolled over."),
                           rule=rule_id(inbox.game, "inbox_moderation"))
    inbox = _lock_open_inbox(inbox)
    if title is None:
        root_title, length = _chain_root_title_and_length(inbox)
        title = in_game_language(inbox.game, lambda: _("%(title)s, part %(n)d") % {"title": root_title, "n": length + 1})
    return _roll_over(inbox, actor=acting_user, now=now, title=_clean_title(title))


@transaction.atomic
def do_kill_inbox(inbox: Inbox, *, acting_user, now: datetime | None = None) -> Inbox:
    """Kill ``inbox``: it takes no more posts and leaves the members' active list; nothing is
    deleted and every reader keeps reading. By its moderators (organizer or Procurator, ``can_moderate_inbox``)
    or the site (``acting_user`` None). Returns the inbox. Raises ``NotAllowed`` ("No such inbox." when
    unreadable) or ``WrongState`` (already killed, game over)."""
    now = now or timezone.now()
    if acting_user is not None:
        viewer_reads.forget_viewer_cache(acting_user)
        if not policies.can_read_inbox(acting_user, inbox):
            raise NotAllowed(_("No such inbox."))
        if not moderation_policy.can_moderate_inbox(acting_user, inbox):
            raise NotAllowed(_("Only the organizer of this inbox or the %(host)s of the game may close it.")
                             % {"host": host_label(inbox.game)}, rule=rule_id(inbox.game, "inbox_moderation"))
    inbox = Inbox.objects.select_for_update(of=("self",)).select_related("game").get(pk=inbox.pk)
    check_not_finished(inbox.game)
    if inbox.killed_at is not None:
        raise WrongState(_("This inbox is already closed."), rule=rule_id(inbox.game, "inbox_moderation"))
    inbox.killed_at = now
    inbox.save(update_fields=["killed_at"])
    record_event(inbox.game, "inbox.killed", actor=acting_user, at=now, payload={"inbox": inbox.pk})
    return inbox


def _residents_of_game(game: Game, residents: Iterable[Resident]) -> list[Resident]:
    """``residents`` deduplicated, in order, each checked to be a seat of ``game`` (``InvalidInput``)."""
    seen, out = set(), []
    for r in residents:
        if r.game_id != game.pk:
            raise InvalidInput(_("%(name)s is not a resident of this game.") % {"name": r.name})
        if r.pk not in seen:
            seen.add(r.pk)
            out.append(r)
    return out


@transaction.atomic
def do_create_secret_inbox(game: Game, *, title: str, members: Iterable[Resident], acting_user,
                           now: datetime | None = None, idempotency_key: str | None = None) -> Inbox:
    """Create a secret inbox (of the ruleset's ``inbox_kind_for("secret")``) organised by ``acting_user`` with ``members``
    (residents of ``game``).

    A resident creator is its organizer (``organizer_resident``) and a member; a staff creator (of a
    ``secret_organizers`` kind) is its organizer through that role (the policy's secret-organizer clause) and reads
    and posts by it. A holder of a ``secret_barred_staff`` kind (a Consigliere, say) may not create one; only
    residents can be members, so staff are never members. The dead neither open one nor are invited
    (they learn nothing created after their death). Returns the Inbox. Raises ``NotAllowed``
    (a game whose ruleset has no secret inboxes, ``RulesetSpec.opened_secret_kind``; barred staff, someone
    outside the game, a dead creator), ``InvalidInput`` (empty or long title, no other
    member, a resident of another game) or ``WrongState`` (a dead invitee; game over).

    ``idempotency_key`` (the form's key): a re-submission of the same form returns the inbox it created, creating
    nothing more (checked first, and a concurrent duplicate meets the unique constraint and gets the same inbox).
    """
    now = now or timezone.now()
    kind = ruleset_of(game).opened_secret_kind()
    if kind is None:
        raise NotAllowed(_("This game's rules allow no private conversations: there are no secret inboxes in it."))
    if acting_user is None or not acting_user.is_authenticated:
        raise NotAllowed(_("Log in to create a secret inbox."))
    if idempotency_key:
        already = _secret_inbox_of_key(game, idempotency_key, acting_user)
        if already is not None:
            return already
    check_not_finished(game)
    viewer_reads.forget_viewer_cache(acting_user)
    barred = policy_tables.kinds_of(game, "secret_barred_staff")
    if barred and any(r.kind in barred for r in policies.staff_roles_in(acting_user, game)):
        raise NotAllowed(ruleset_of(game).wording("secret_inbox_barred_staff",
                                                  _("Your staff role may not take part in secret inboxes.")),
                         rule=rule_id(game, "secret_inbox_staff"))
    seat = policies.seat_in(acting_user, game)
    order = {kind: rank for rank, kind in enumerate(policy_tables.ranked_kinds(game, "secret_organizers"))}
    roles = sorted((r for r in policies.staff_roles_in(acting_user, game) if r.kind in order),
                   key=lambda r: (order[r.kind], r.pk))
    if seat is None and not roles:
        raise NotAllowed(_("Only residents and staff of this game may create secret inboxes."),
                         rule=rule_id(game, "secret_inbox"))
    if seat is not None and seat.status != LifeStatus.ALIVE:
        raise NotAllowed(_("The dead have no voice among the living: they cannot open a secret inbox."),
                         rule=rule_id(game, "dead_are_silent"))
    title = _clean_title(title)
    invited = [r for r in _residents_of_game(game, members) if seat is None or r.pk != seat.pk]
    if not invited:
        raise InvalidInput(_("Invite at least one member."), rule=rule_id(game, "secret_inbox"))
    alive = set(Resident.objects.filter(pk__in=[r.pk for r in invited], status=LifeStatus.ALIVE).values_list("pk", flat=True))
    for r in (r for r in invited if r.pk not in alive):  # read fresh: a death since the form was shown counts
        raise WrongState(_("%(name)s is dead: a secret inbox opened now is news the dead never learn.")
                         % {"name": r.name}, rule=rule_id(game, "secret_knowledge"))
    organizer = {"organizer_resident": seat, "members": [seat, *invited]} if seat is not None else \
        {"organizer": roles[0], "members": invited}
    try:
        with transaction.atomic():
            return new_inbox(game, kind, title=title, actor=acting_user, now=now,
                             idempotency_key=idempotency_key or None, **organizer)
    except IntegrityError:
        already = _secret_inbox_of_key(game, idempotency_key, acting_user) if idempotency_key else None
        if already is None:
            raise
        return already


def _secret_inbox_of_key(game: Game, key: str, user) -> Inbox | None:
    """The secret inbox of ``game`` that ``user`` created with the form key ``key``, or None. Raises
    ``InvalidInput`` when the key belongs to an inbox of someone else (a form of another account replayed)."""
    inbox = Inbox.objects.filter(game=game, kind=ruleset_of(game).inbox_kind_for("secret"), idempotency_key=key).select_related(
        "organizer_resident", "organizer").first()
    if inbox is None:
        return None
    creator = inbox.organizer_resident.user_id if inbox.organizer_resident_id else inbox.organizer.user_id
    if creator != user.pk:
        raise InvalidInput(_("This form is out of date: reload the page."))
    return inbox


@transaction.atomic
def do_leave_secret_inbox(inbox: Inbox, *, acting_user, now: datetime | None = None) -> Membership:
    """``acting_user``'s seat leaves the secret ``inbox``: the membership becomes removed, so the
    inbox disappears for them. Returns the membership. Raises ``NotAllowed`` ("No such inbox." when
    they cannot read it), ``InvalidInput`` (not a secret inbox; a staff organizer, who is no member) or
    ``WrongState`` (game over)."""
    now = now or timezone.now()
    viewer_reads.forget_viewer_cache(acting_user)
    if acting_user is None or not policies.can_read_inbox(acting_user, inbox):
        raise NotAllowed(_("No such inbox."))
    check_not_finished(inbox.game)
    if inbox.kind not in policy_tables.kinds_of(inbox.game, "leavable_kinds"):
        raise InvalidInput(_("This inbox cannot be left."), rule=rule_id(inbox.game, "secret_inbox"))
    seat = policies.seat_in(acting_user, inbox.game_id)
    membership = (Membership.objects.select_for_update().filter(inbox=inbox, resident=seat).first()
                  if seat is not None else None)
    if membership is None or membership.state == MembershipState.REMOVED:
        raise InvalidInput(_("Only members can leave an inbox."), rule=rule_id(inbox.game, "secret_inbox"))
    membership.state = MembershipState.REMOVED
    membership.banned_until = None
    membership.since = now
    membership.save(update_fields=["state", "banned_until", "since"])
    viewer_reads.forget_viewer_cache(acting_user)
    record_event(inbox.game, "membership.left", actor=acting_user, at=now,
                 payload={"inbox": inbox.pk, "resident": seat.pk})
    return membership


#: The audience of a stage inbox: every resident of the game.
STAGE_AUDIENCE_ALL = "all"


@transaction.atomic
def do_create_stage_inbox(game: Game, *, title: str, speakers: Iterable[Resident], audience=None, acting_user,
                          now: datetime | None = None) -> Inbox:
    """Open a stage inbox: a confrontation, a last word, an interrogation or a séance.

    ``speakers`` (residents of ``game``, at least one; the dead too, for a séance) are members and post;
    ``audience`` is a City of the game (its residents), ``STAGE_AUDIENCE_ALL`` (every resident) or None (no
    audience): its residents who are not speakers are banned, i.e. read only. The organizer is the Procurator
    (who posts by role); the kind is the ruleset's ``inbox_kind_for("stage")``. Procurator only. Returns the Inbox. Raises
    ``NotAllowed`` (also: the game's ruleset has no stages), ``InvalidInput`` (empty title,
    no speaker, a resident or city of another game) or ``WrongState`` (game over).
    """
    now = now or timezone.now()
    if acting_user is None or not _is_procurator(acting_user, game):
        raise NotAllowed(_("Only the %(host)s of this game may open a stage.") % {"host": host_label(game)},
                         rule=rule_id(game, "stage_inbox"))
    kind = kind_for(game, "stage")
    check_not_finished(game)
    title = _clean_title(title)
    speakers = _residents_of_game(game, speakers)
    if not speakers:
        raise InvalidInput(_("Choose at least one speaker."), rule=rule_id(game, "stage_inbox"))
    city = None
    if audience is None:
        listeners = []
    elif audience == STAGE_AUDIENCE_ALL:
        listeners = list(Resident.objects.filter(game=game).order_by("city__number", "name"))
    elif isinstance(audience, City) and audience.game_id == game.pk:
        city = audience
        listeners = list(Resident.objects.filter(city=audience).order_by("name"))
    else:
        raise InvalidInput(_("The audience is a city of this game, or all residents."),
                           rule=rule_id(game, "stage_inbox"))
    speaker_ids = {r.pk for r in speakers}
    procurator = StaffRole.objects.get(game=game, kind=HOST_STAFF_KIND)
    return new_inbox(game, kind, title=title, actor=acting_user, now=now, city=city, organizer=procurator,
                      members=speakers, banned=[r for r in listeners if r.pk not in speaker_ids])
