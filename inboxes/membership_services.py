"""Deaths and memberships: what a death does to a seat's inboxes, a spirit laid to rest, the court renewed when
the judges change, the Arbiter's penalty bans; editing and hiding messages; replacing a player. Each refusal cites
the rule its game's ruleset maps to the refusal's neutral key (``kernel.rulesets.rule_id``)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from cities.models import LifeStatus, Resident, StaffRole
from cities.staff_kinds import host_label, hosts_label, staff_labels
from inboxes import moderation_policy, policy_tables, viewer_reads
from kernel.audit import record_event, record_events
from kernel.errors import InvalidInput, NotAllowed, WrongState
from kernel.rulesets import rule_id, ruleset_of, seat_state_relations

from . import policies
from .models import (
    DeathCause,
    Inbox,
    Membership,
    MembershipState,
    Message,
    MessageRevision,
    Spectator,
)
from .rendering import has_visible_text, render_markdown
from .services import (
    check_not_finished,
    _check_seat_state_allows_moderation,
    check_site_or_procurator,
    _is_procurator,
    _make_member,
)

# ==============================================================================================================
# Death and membership : deaths, spirits, the court's renewal, and the Arbiter's penalty bans
# ==============================================================================================================

@transaction.atomic
def do_kill_resident(resident: Resident, cause: str, *, acting_user, spirit: bool = False,
                     now: datetime | None = None) -> Resident:
    """Record the death of ``resident`` and apply every membership change at once, in one transaction.

    ``cause`` one of ``DeathCause`` (killed, executed, suicide, penalty). ``spirit`` True makes a resident killed at
    night a spirit for the day, in a ruleset that has spirits. Effects: status dead, ``died_at`` = ``now`` (aware
    UTC); the membership changes a death brings are the ruleset's (``after_death_memberships``: banned in their
    city's inboxes, removed from the voting and mafia ones, the inboxes about them killed, a member of the cemetery,
    say); the engine changes none by itself. The cause is stored in the ``resident.died`` GameEvent, with the
    ruleset's ``death_facts``. Last, the ruleset's ``after_deaths`` updates its own seat state (a spirit, a judge's
    seat and a court, say).

    By the site (``acting_user`` None) or the Procurator (manual decisions: naming the executed when nobody was voted
    for, ending a game early). Returns the Resident. Raises ``NotAllowed``, ``InvalidInput`` (unknown cause, a spirit
    not killed) or ``WrongState`` (not alive, game over, no cemetery) and changes nothing then.
    """
    return do_kill_residents([(resident, spirit)], cause, acting_user=acting_user, now=now)[0]


@transaction.atomic
def do_kill_residents(deaths: Sequence[tuple[Resident, bool]], cause: str, *, acting_user,
                      now: datetime | None = None) -> list[Resident]:
    """Record several deaths of one game at once (a night's victims, who die together at its resolution): ``deaths``
    holds ``(resident, spirit)`` pairs; each death does exactly what ``do_kill_resident`` does, in one transaction and a
    number of statements that does not grow with the number of deaths (the court is renewed once when judges died).
    Returns the Residents in the order given. Raises what ``do_kill_resident`` raises (also ``InvalidInput`` for
    residents of two games or one resident twice) and changes nothing then."""
    now = now or timezone.now()
    if not deaths:
        return []
    spirit_of = {r.pk: bool(spirit) for r, spirit in deaths}
    game = deaths[0][0].game
    if len(spirit_of) != len(deaths):
        raise InvalidInput(_("The same resident cannot die twice."), rule=rule_id(game, "death"))
    check_site_or_procurator(game, acting_user, "death")
    if cause not in DeathCause.values:
        raise InvalidInput(_("Unknown cause of death: %(cause)s.") % {"cause": cause}, rule=rule_id(game, "death"))
    if any(spirit_of.values()) and cause != DeathCause.KILLED:
        raise InvalidInput(_("Only a resident killed at night can become a spirit."), rule=rule_id(game, "spirit"))
    locked = {r.pk: r for r in Resident.objects.select_for_update(of=("self",))
              .select_related("game", "city", *seat_state_relations()).filter(pk__in=spirit_of).order_by("pk")}
    residents = [locked[r.pk] for r, _spirit in deaths]
    game = residents[0].game
    if any(r.game_id != game.pk for r in residents):
        raise InvalidInput(_("These residents are not of one game."), rule=rule_id(game, "death"))
    check_not_finished(game)
    for resident in residents:
        if resident.status != LifeStatus.ALIVE:
            raise WrongState(_("%(name)s is not alive.") % {"name": resident.name}, rule=rule_id(game, "death"))
    ids = list(spirit_of)
    spec = ruleset_of(game)
    facts = spec.death_facts(game, residents)
    for resident in residents:
        resident.status, resident.died_at = LifeStatus.DEAD, now
    Resident.objects.filter(pk__in=ids).update(status=LifeStatus.DEAD, died_at=now)
    killed_of: Mapping[int, list[int]] = {}
    if spec.own_death_memberships:
        # The ruleset says what a death does to the seat's inboxes (its inboxes are its own).
        killed_of = spec.after_death_memberships(game, residents, cause=cause, spirit_of=spirit_of, now=now) or {}
    record_events(game, [("resident.died", {"resident": r.pk, "cause": cause, "spirit": spirit_of[r.pk],
                                            "killed_inboxes": killed_of.get(r.pk, []), **facts.get(r.pk, {})})
                         for r in residents], actor=acting_user, at=now)
    spec.after_deaths(game, residents, spirit_of=spirit_of, cause=cause, acting_user=acting_user, now=now)
    return residents


@transaction.atomic
def do_penalty_ban(resident: Resident, inboxes: Iterable[Inbox], until: datetime, reason: str, *, acting_user,
                   now: datetime | None = None) -> list[Membership]:
    """The Supreme Arbiter's penalty ban: ``resident`` reads but cannot post in each of
    ``inboxes`` until ``until`` (aware UTC, in the future), for ``reason`` (shown to nobody but moderators).

    Arbiter only, in inboxes of its ruleset's ``penalty_ban_kinds`` (``policy_tables``: kinds whose membership is no
    secret). A ban never shortens: a ban for good stays, a later end stays. All or nothing. Returns the memberships, in the order of
    ``inboxes``. Raises ``NotAllowed`` (not the Arbiter), ``InvalidInput`` (no inbox, another game's inbox, a kind
    outside ``penalty_ban_kinds``, not in the inbox, naive or past end, empty reason) or ``WrongState`` (killed
    inbox, game over).
    """
    now = now or timezone.now()
    game = resident.game
    if acting_user is None or not policies.holds_role_of(acting_user, game, "court_staff_kinds"):
        court = ", ".join(staff_labels(game, "court_staff_kinds"))
        refusal = (_("Only the %(court)s may impose a penalty ban.") % {"court": court} if court
                   else _("Only the game's court may impose a penalty ban."))
        raise NotAllowed(refusal, rule=rule_id(game, "court_staff"))
    check_not_finished(game)
    if until is None or timezone.is_naive(until):
        raise InvalidInput(_("The end of the ban must include its time zone."), rule=rule_id(game, "penalty_ban"))
    if until <= now:
        raise InvalidInput(_("The end of the ban must be in the future."), rule=rule_id(game, "penalty_ban"))
    reason = (reason or "").strip()[:300]
    if not reason:
        raise InvalidInput(_("Give the reason for the penalty."), rule=rule_id(game, "court_staff"))
    inboxes = list(inboxes)
    if not inboxes:
        raise InvalidInput(_("Name at least one inbox."), rule=rule_id(game, "penalty_ban"))
    rows = []
    for inbox in inboxes:
        if inbox.game_id != game.pk:
            raise InvalidInput(_("An inbox of another game was named."), rule=rule_id(game, "penalty_ban"))
        if inbox.kind not in policy_tables.kinds_of(game, "penalty_ban_kinds"):
            raise InvalidInput(_("Penalty bans apply only to inboxes of these kinds: %(kinds)s.")
                               % {"kinds": ", ".join(policy_tables.kind_labels(game, "penalty_ban_kinds"))},
                               rule=rule_id(game, "penalty_ban"))
        inbox = Inbox.objects.select_for_update().get(pk=inbox.pk)
        if inbox.killed_at is not None:
            raise WrongState(_("%(inbox)s is closed.") % {"inbox": inbox.title}, rule=rule_id(game, "inbox_moderation"))
        m = Membership.objects.select_for_update().filter(inbox=inbox, resident=resident).first()
        if m is None or m.state == MembershipState.REMOVED:
            raise InvalidInput(_("%(name)s is not in %(inbox)s.") % {"name": resident.name, "inbox": inbox.title},
                               rule=rule_id(game, "penalty_ban"))
        _check_seat_state_allows_moderation(inbox, resident)
        rows.append((inbox, m))
    out = []
    for inbox, m in rows:
        if m.state == MembershipState.BANNED and (m.banned_until is None or m.banned_until >= until):
            out.append(m)  # a ban never shortens
            continue
        m.state = MembershipState.BANNED
        m.banned_until = until
        m.reason = reason
        m.since = now
        m.save(update_fields=["state", "banned_until", "reason", "since"])
        out.append(m)
    record_event(game, "membership.penalty_banned", actor=acting_user, at=now,
                 payload={"resident": resident.pk, "inboxes": [i.pk for i, _m in rows], "until": until.isoformat(),
                          "reason": reason})
    return out


# ==============================================================================================================
# Messages : editing one's own, hiding for abuse
# ==============================================================================================================

@transaction.atomic
def do_edit_message(message: Message, text: str, *, acting_user, now: datetime | None = None) -> Message:
    """Replace the text of ``message`` by ``text`` (Markdown) as its author, keeping the old text as a
    ``MessageRevision`` (every reader sees every revision) and setting ``edited_at`` = ``now`` (aware UTC).

    Allowed to the message's author (``author_user``) while they may post in the inbox, within
    ``moderation_policy.EDIT_WINDOW`` (10 minutes) of its receive time, in discussion inboxes (not ``immutable_kinds``),
    never for a hidden message. Returns the Message. Raises, changing nothing: ``NotAllowed`` ("No such inbox."
    when unreadable; not the author; an immutable kind; banned), ``InvalidInput`` (empty, too long, unchanged)
    or ``WrongState`` (window over, hidden, inbox closed or rolled over, game over).
    """
    now = now or timezone.now()
    text = (text or "").strip()
    if not has_visible_text(text):
        raise InvalidInput(_("The message is empty."))
    limit = settings.MAFIA_MESSAGE_MAX_LENGTH
    if len(text) > limit:
        raise InvalidInput(_("The message is too long: %(length)d characters, at most %(max)d.")
                           % {"length": len(text), "max": limit})
    message = Message.objects.select_for_update(of=("self",)).select_related("inbox__game").get(pk=message.pk)
    inbox = message.inbox
    if acting_user is None:
        raise NotAllowed(_("Only the author may edit a message."), rule=rule_id(inbox.game, "message_edit"))
    viewer_reads.forget_viewer_cache(acting_user)
    if not policies.can_read_inbox(acting_user, inbox):
        raise NotAllowed(_("No such inbox."))
    reason = moderation_policy.edit_denial_reason(acting_user, message, now)
    if reason is not None:
        immutable = policy_tables.kinds_of(inbox.game, "immutable_kinds")
        if message.author_user_id != acting_user.pk or inbox.kind in immutable:
            error = NotAllowed
        elif (message.is_hidden or now >= message.received_at + moderation_policy.EDIT_WINDOW or not inbox.is_open
              or inbox.game.is_finished):
            error = WrongState
        else:
            error = NotAllowed  # may read but not post: banned
        raise error(reason, rule=rule_id(inbox.game, "message_edit"))
    if text == message.body:
        raise InvalidInput(_("The text is unchanged."), rule=rule_id(inbox.game, "message_edit"))
    revision = MessageRevision.objects.create(message=message, body=message.body, body_html=message.body_html,
                                              replaced_at=now)
    message.body = text
    message.body_html = render_markdown(text)
    message.edited_at = now
    message.save(update_fields=["body", "body_html", "edited_at"])
    record_event(inbox.game, "message.edited", actor=acting_user, at=now,
                 payload={"inbox": inbox.pk, "message": message.pk, "revision": revision.pk})
    return message


@transaction.atomic
def do_hide_message(message: Message, *, acting_user, now: datetime | None = None) -> Message:
    """Hide ``message`` for abuse: readers see that it was hidden, its moderators (organizer or
    Procurator, ``can_moderate_inbox``) still see the text; nothing is deleted. Returns the Message. Raises
    ``NotAllowed`` ("No such inbox." when unreadable; not a moderator) or ``WrongState`` (already hidden)."""
    now = now or timezone.now()
    message = Message.objects.select_for_update(of=("self",)).select_related("inbox__game").get(pk=message.pk)
    inbox = message.inbox
    if acting_user is None:
        raise NotAllowed(_("Only the organizer of this inbox or the %(host)s of the game may hide messages.")
                         % {"host": host_label(inbox.game)}, rule=rule_id(inbox.game, "message_hiding"))
    viewer_reads.forget_viewer_cache(acting_user)
    if not policies.can_read_inbox(acting_user, inbox):
        raise NotAllowed(_("No such inbox."))
    if not moderation_policy.can_moderate_inbox(acting_user, inbox):
        raise NotAllowed(_("Only the organizer of this inbox or the %(host)s of the game may hide messages.")
                         % {"host": host_label(inbox.game)}, rule=rule_id(inbox.game, "message_hiding"))
    if message.is_hidden:
        raise WrongState(_("This message is already hidden."), rule=rule_id(inbox.game, "message_hiding"))
    message.is_hidden = True
    message.hidden_at = now
    message.hidden_by = acting_user
    message.save(update_fields=["is_hidden", "hidden_at", "hidden_by"])
    record_event(inbox.game, "message.hidden", actor=acting_user, at=now,
                 payload={"inbox": inbox.pk, "message": message.pk})
    return message


# ==============================================================================================================
# Replacements : a new account takes over a seat
# ==============================================================================================================

@transaction.atomic
def do_replace_player(resident: Resident, new_user, *, acting_user, now: datetime | None = None) -> Resident:
    """``new_user`` takes over the seat ``resident``. The seat keeps its city, role, memberships,
    votes and history; the access policy derives a seat's access from ``Resident.user``, so the old user loses
    every non-public inbox of the game at once and the new user gains them. The seat is renamed to the new
    user's public name (new posts carry it); old posts keep the name of who wrote them (``Message.author_name``).

    The game's host or a co-host only. Returns the Resident. Raises ``NotAllowed`` (neither; ``new_user`` is staff of
    the game: staff hold no seat), ``InvalidInput`` (``new_user`` already holds a seat in the game, this one included, is
    inactive, has ever watched the game as a spectator (the spectators' thread is no player's), or their name is taken
    by another seat) or ``WrongState`` (game over).
    """
    now = now or timezone.now()
    game = resident.game
    # The game's host; a co-host (a kind of the ruleset's ``cohost_staff_kinds``) does what the host does.
    if acting_user is None or not (_is_procurator(acting_user, game)
                                   or policies.holds_role_of(acting_user, game, "cohost_staff_kinds")):
        raise NotAllowed(_("Only the %(host)s of this game may replace a player.") % {"host": hosts_label(game)},
                         rule=rule_id(game, "replacement"))
    check_not_finished(game)
    resident = Resident.objects.select_for_update(of=("self",)).select_related("user").get(pk=resident.pk)
    if new_user is None or not new_user.is_active:
        raise InvalidInput(_("Choose an active account to take the seat."), rule=rule_id(game, "replacement"))
    if StaffRole.objects.filter(game=game, user=new_user).exists():
        raise NotAllowed(_("Staff of a game cannot be its residents."), rule=rule_id(game, "staff_not_players"))
    if Resident.objects.filter(game=game, user=new_user).exists():
        raise InvalidInput(_("%(name)s already has a seat in this game.") % {"name": new_user.public_name},
                           rule=rule_id(game, "replacement"))
    if Spectator.objects.filter(game=game, user=new_user).exists():  # left or not: they read the spectators
        raise InvalidInput(_("%(name)s has watched this game as a spectator and cannot take a seat in it.")
                           % {"name": new_user.public_name}, rule=rule_id(game, "spectator_not_player"))
    new_name = new_user.public_name[:60]
    if Resident.objects.filter(game=game, name=new_name).exclude(pk=resident.pk).exists():
        raise InvalidInput(_("The name %(name)s is taken in this game.") % {"name": new_name},
                           rule=rule_id(game, "replacement"))
    old_user, old_name = resident.user, resident.name
    resident.user = new_user
    resident.name = new_name
    resident.save(update_fields=["user", "name"])
    viewer_reads.forget_viewer_cache(old_user)
    viewer_reads.forget_viewer_cache(new_user)
    record_event(game, "resident.replaced", actor=acting_user, at=now,
                 payload={"resident": resident.pk, "old_user": old_user.pk, "new_user": new_user.pk,
                          "old_name": old_name, "new_name": new_name})
    return resident


@transaction.atomic
def do_add_member_by_site(inbox: Inbox, resident: Resident, *, acting_user, now: datetime | None = None) -> Membership:
    """Make ``resident`` a member of ``inbox`` on the site's own authority: a workflow's consequence, such as
    a new commissar joining the police station. Only the site may (``acting_user`` must be None).
    Raises ``NotAllowed`` for any user, ``InvalidInput`` (another game, already a member), ``WrongState`` (killed)."""
    now = now or timezone.now()
    if acting_user is not None:
        raise NotAllowed(_("Only the site adds members this way."))
    return _make_member(inbox, resident, actor=None, now=now)
