"""THE access policy (DESIGN.md "The access policy: the heart of the product").

Every question "may this user see or do this?" about inboxes, messages, residents' secrets and staff identities
is answered here and nowhere else. Each inbox rule is written once, as data (the staff grants and per-kind tables each
ruleset declares in ``RulesetSpec.policy_grants``, read for games of that ruleset only: ``staff_grants_of``,
``policy_tables.kinds_of``; the membership states; for a finished game the kinds its ruleset discloses,
``public_after_game_kinds``, ``open_on_request_kinds``, ``consent_after_game``, with the ``archive`` app's consent
and open-request rows), and read by two renderings that
must agree (tests/inboxes/test_policy_matrix.py, tests/archive/test_disclosure_matrix.py):

* the instance checks ``can_read_inbox`` / ``can_post_in_inbox`` (one object);
* the query forms ``readable_inboxes`` / ``readable_messages`` (lists, counts, search, feeds) and
  ``readers_of_inbox`` (the audience for notifications).

What must never leak, and why: the game is a contest of hidden information. A resident's alignment, who the
commissar is, who the Consigliere is, what the mafia or a personal inbox says: any of these shown to the wrong
viewer (as text, a count, a title, a timestamp, or a 403 instead of a 404) decides the game unfairly and cannot
be undone. Hence:

* A Django superuser or ``is_staff`` account gets nothing from that flag (game staff are game roles, not site
  administrators); game staff powers come only from ``StaffRole`` rows.
* Residents' access comes only from ``Membership`` rows of the seat they hold now (a replaced player loses
  everything at once).
* ``access_inbox_by_id`` answers 404 alike for a missing and a forbidden id, so ids cannot be probed.
* Alignments and ranks reach pages only through ``visible_alignment``, ``knows_seat_role`` (the ranks each
  ruleset declares, ``RulesetSpec.seat_roles``) and ``visible_staff`` (the knowledge matrix).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Exists, F, FilteredRelation, OuterRef, Q, QuerySet
from django.http import Http404
from django.utils import timezone
from django.utils.translation import gettext as _

from archive.models import OpenRequest
from cities.models import Game, GameStatus, LifeStatus, Resident, StaffRole
from cities.staff_kinds import staff_kinds_of
from kernel.prepared import PreparedQuery
from kernel.public_ids import is_public_id
from kernel.rulesets import get_ruleset, registered_rulesets, ruleset_of
from kernel.timezones import time_for
from staff.models import StaffStandIn

from . import policy_tables
from .disclosure_consent import consented_q, consenters_of, has_consented
from .models import Inbox, Membership, MembershipState, Message, Spectator
from .policy_tables import READING_STATES, kinds_of
from .viewer_reads import lock_for_post, seats_and_roles_of


@dataclass(frozen=True)
class StaffGrant:
    """What one staff role may do in inboxes of one kind: read always, post when ``post``.

    ``own_city`` limits the grant to inboxes of the role's city (a city's staff role, or a stand-in's for that
    city).
    """

    inbox_kind: str
    post: bool
    own_city: bool = False


def staff_grants_of(ruleset: str, kind: str) -> tuple[StaffGrant, ...]:
    """The grants of a staff role of ``kind`` in a game of the ruleset ``ruleset`` (a key): its
    ``policy_grants["staff"]`` table (an inbox table by staff role, say). A ruleset never inherits another's."""
    return get_ruleset(ruleset).policy_grants.get("staff", {}).get(kind, ())


def conditional_staff_grants_of(ruleset: str) -> tuple[tuple[str, StaffGrant, Q], ...]:
    """The grants of ``ruleset`` that hold only for inboxes matching a condition, as (staff kind, grant, ``Q`` over
    Inbox): its ``policy_grants["conditional_staff"]``. The instance form asks the same ``Q`` of the one inbox,
    so both renderings agree by construction."""
    return tuple(get_ruleset(ruleset).policy_grants.get("conditional_staff", ()))


def spectator_grants_of(ruleset: str) -> tuple[StaffGrant, ...]:
    """What a spectator of a game of ``ruleset`` reads (and posts, ``post``) by inbox kind: its
    ``policy_grants["spectators"]`` (a game thread and a spectators' thread, say); () where a ruleset has none."""
    return tuple(get_ruleset(ruleset).policy_grants.get("spectators", ()))


def public_after_game_kinds(ruleset: str) -> frozenset[str]:
    """The inbox kinds a finished game of ``ruleset`` discloses to everyone (its "public" kinds): its
    ``policy_grants["public_after_game"]``."""
    return frozenset(get_ruleset(ruleset).policy_grants.get("public_after_game", ()))


def open_on_request_kinds(ruleset: str) -> frozenset[str]:
    """The inbox kinds of a finished game of ``ruleset`` open to any logged-in user who asks (one logged click): its
    ``policy_grants["open_on_request_after_game"]``."""
    return frozenset(get_ruleset(ruleset).policy_grants.get("open_on_request_after_game", ()))


def _kinds_of_rulesets_q(kinds_of) -> Q:
    """``Q`` over Inbox: an inbox of a game of some registered ruleset whose kind is in ``kinds_of(ruleset)``."""
    q = Q(pk__in=[])
    for key in registered_rulesets():
        kinds = kinds_of(key)
        if kinds:
            q |= Q(game__ruleset=key, kind__in=sorted(kinds))
    return q


def _ruleset_of_role(role: StaffRole) -> str:
    """The ruleset key of ``role``'s game: read with the role by the viewer's reads (``_game_ruleset``), else from
    its game."""
    key = getattr(role, "_game_ruleset", None)
    return key if key is not None else role.game.ruleset


# --------------------------------------------------------------------------------------------------------------
# Who the viewer is in a game
# --------------------------------------------------------------------------------------------------------------

def _is_authenticated(user) -> bool:
    return user is not None and getattr(user, "is_authenticated", False)


def _roles_of(user) -> list[StaffRole]:
    """All staff roles ``user`` holds, in every game, plus the city staff roles they stand in for now
    (``standing_in_roles``); cached on the user object for the request."""
    if not _is_authenticated(user):
        return []
    cached = getattr(user, "_mafia_staff_roles", None)
    if cached is None:
        _read_viewer(user)
        cached = user._mafia_staff_roles
    return cached


def _read_viewer(user) -> None:
    """Read and cache ``user``'s staff roles (with the city staff roles they stand in for now) and seats
    (``_roles_of``, ``_seats_of``): one statement for a viewer with a seat (``viewer_reads``)."""
    seats, roles = seats_and_roles_of(user.pk)
    if any(r.city_id is not None for r in roles):  # a city's staff role (``city_staff_kinds``) may stand in
        roles += standing_in_roles(user)
    user._mafia_staff_roles = roles
    user._mafia_seats = seats


def standing_in_roles(user, now: datetime | None = None) -> list[StaffRole]:
    """The city staff roles (of other cities) whose powers ``user`` holds at ``now`` (aware UTC) as a stand-in (the
    holder of a city's staff role granted the powers of the absent holder of the same kind in another city,
    ``staff.models.StaffStandIn``): the absent holder's own ``StaffRole`` rows, with their game and city loaded,
    each marked ``stands_in_now = True``. A stand-in holds the absent holder's grants and organises that city's
    inboxes for the period (start included, end excluded, unless ended earlier); it never inherits the absent
    holder's secret inboxes (their content is their members'). One query; [] for anonymous users.
    """
    if not _is_authenticated(user):
        return []
    now = now or timezone.now()
    periods = (StaffStandIn.objects.filter(stand_in__user=user, stand_in__city__isnull=False,
                                           starts_at__lte=now, ends_at__gt=now, ended_at__isnull=True)
               .select_related("absent__game", "absent__city").order_by("city__number", "id"))
    roles = []
    for period in periods:
        role = period.absent
        role.stands_in_now = True
        if all(r.pk != role.pk for r in roles):
            roles.append(role)
    return roles


def _is_stand_in(role: StaffRole) -> bool:
    return getattr(role, "stands_in_now", False)


def _seats_of(user) -> dict[int, Resident]:
    """The seats ``user`` holds now, by game id; cached on the user object for the request."""
    if not _is_authenticated(user):
        return {}
    cached = getattr(user, "_mafia_seats", None)
    if cached is None:
        _read_viewer(user)
        cached = user._mafia_seats
    return cached


def staff_roles_in(user, game: Game | int) -> list[StaffRole]:
    """The staff roles ``user`` holds in ``game`` (a Game or its id); [] for anonymous users."""
    game_id = game if isinstance(game, int) else game.pk
    return [role for role in _roles_of(user) if role.game_id == game_id]


def seat_in(user, game: Game | int) -> Resident | None:
    """The seat (Resident) ``user`` holds in ``game`` now, or None."""
    game_id = game if isinstance(game, int) else game.pk
    return _seats_of(user).get(game_id)


def spectated_games(user) -> set[int]:
    """Ids of the games ``user`` watches as a spectator now: a ``Spectator`` row not left, in a game
    where the account holds no seat and no staff role (a seat or a role decides instead). Cached for the request."""
    if not _is_authenticated(user):
        return set()
    cached = getattr(user, "_mafia_spectating", None)
    if cached is None:
        rows = Spectator.objects.filter(user=user, left_at__isnull=True).values_list("game_id", flat=True)
        cached = {g for g in rows if seat_in(user, g) is None and not staff_roles_in(user, g)}
        user._mafia_spectating = cached
    return cached


def spectator_of(user, game: Game | int) -> bool:
    """True when ``user`` watches ``game`` (a Game or its id) as a spectator now; see ``spectated_games``. Answered
    from what ``access_inbox_by_id`` read with the inbox when that was this game's inbox, else from
    ``spectated_games``."""
    game_id = game if isinstance(game, int) else game.pk
    known = getattr(user, "_mafia_watching", None)
    if known is not None and game_id in known:
        return known[game_id]
    return game_id in spectated_games(user)


def _spectator_grants(user, inbox: Inbox) -> list[StaffGrant]:
    grants = [g for g in spectator_grants_of(inbox.game.ruleset) if g.inbox_kind == inbox.kind]
    return grants if grants and spectator_of(user, inbox.game_id) else []


def holds_role(user, game: Game | int, kind: str, city_id: int | None = None) -> bool:
    """True when ``user`` holds staff role ``kind`` in ``game`` (for a city's staff role, of ``city_id`` if
    given)."""
    return any(r.kind == kind and (city_id is None or r.city_id == city_id) for r in staff_roles_in(user, game))


def holds_city_role(user, game: Game | int, city_id: int) -> bool:
    """True when ``user`` holds in ``game`` a city's staff role (a kind of its ruleset's ``city_staff_kinds``, the
    only kinds appointed with a city: a Tribune, say) of the city ``city_id``, a stand-in's included. No query
    beyond ``staff_roles_in``."""
    return any(r.city_id == city_id for r in staff_roles_in(user, game))


def holds_role_of(user, game: Game, table: str, city_id: int | None = None) -> bool:
    """True when ``user`` holds in ``game`` a staff role of a kind its ruleset lists in the staff table ``table``
    (``cities.staff_kinds.STAFF_TABLES``; of ``city_id`` if given). Raises ``ValueError`` for an unknown table."""
    kinds = staff_kinds_of(game, table)
    return any(r.kind in kinds and (city_id is None or r.city_id == city_id) for r in staff_roles_in(user, game))


# --------------------------------------------------------------------------------------------------------------
# Inboxes: the rule, in its two renderings
# --------------------------------------------------------------------------------------------------------------

def _grants_matching(roles: list[StaffRole], inbox: Inbox) -> list[StaffGrant]:
    ruleset = inbox.game.ruleset
    grants = [
        grant
        for role in roles
        if role.game_id == inbox.game_id
        for grant in staff_grants_of(ruleset, role.kind)
        if grant.inbox_kind == inbox.kind and (not grant.own_city or role.city_id == inbox.city_id)
    ]
    for kind, grant, condition in conditional_staff_grants_of(ruleset):
        if (grant.inbox_kind == inbox.kind and any(r.game_id == inbox.game_id and r.kind == kind for r in roles)
                and Inbox.objects.filter(pk=inbox.pk).filter(condition).exists()):
            grants.append(grant)
    return grants


def conditional_grant_roles(user, inbox: Inbox, *, post: bool) -> list[StaffRole]:
    """The roles of ``user`` that a conditional grant of the game's ruleset (``conditional_staff_grants_of``) lets
    read (``post``: and post) in ``inbox``: for ``do_post_message`` to name the staff author."""
    out = []
    for kind, grant, condition in conditional_staff_grants_of(inbox.game.ruleset):
        if grant.inbox_kind != inbox.kind or (post and not grant.post):
            continue
        roles = [r for r in staff_roles_in(user, inbox.game_id) if r.kind == kind]
        if roles and Inbox.objects.filter(pk=inbox.pk).filter(condition).exists():
            out.extend(roles)
    return out


def _secret_organizer_roles(roles: list[StaffRole], inbox: Inbox) -> list[StaffRole]:
    """The roles among ``roles`` that organise ``inbox``, of a kind its ruleset lets the organizer into
    (``organized_kinds``), as a kind of ``secret_organizers``."""
    if inbox.organizer_id is None or inbox.kind not in kinds_of(inbox.game, "organized_kinds"):
        return []
    organizers = kinds_of(inbox.game, "secret_organizers")
    return [r for r in roles if r.pk == inbox.organizer_id and r.kind in organizers and not _is_stand_in(r)]


def membership_of(user, inbox: Inbox) -> Membership | None:
    """The membership of ``user``'s seat in ``inbox`` (None if none); cached on the user for the request."""
    seat = seat_in(user, inbox.game_id)
    if seat is None:
        return None
    cache = getattr(user, "_mafia_memberships", None)
    if cache is None:
        cache = user._mafia_memberships = {}
    if inbox.pk not in cache:
        cache[inbox.pk] = Membership.objects.filter(inbox=inbox, resident=seat).first()
    return cache[inbox.pk]


def _is_finished(inbox: Inbox) -> bool:
    return inbox.game.status == GameStatus.FINISHED


def knowledge_cutoff(seat: Resident | None) -> datetime | None:
    """The moment after which ``seat`` learns nothing more (knowledge is dated): the death
    of a dead seat (a spirit included), else None (a living seat, or one whose death time is unknown). The
    seat, not the account: after a replacement the new holder knows what the seat knew."""
    if seat is None or seat.status == LifeStatus.ALIVE:
        return None
    return seat.died_at


def message_cutoff(user, inbox: Inbox) -> datetime | None:
    """The receive time (aware UTC) after which ``user`` reads no message of ``inbox`` (None: no limit): their dead
    seat's death in its ruleset's ``dated_kinds`` while the game runs (knowledge is dated); the instance form of the
    dated
    clause of ``readable_messages``, for thread pages, live updates and unread counts. No query."""
    if not _is_authenticated(user) or inbox.kind not in kinds_of(inbox.game, "dated_kinds") or _is_finished(inbox):
        return None
    return knowledge_cutoff(seat_in(user, inbox.game_id))


def held_back_kinds(game: Game) -> tuple[str, ...]:
    """The inbox kinds of ``game``'s ruleset whose memberships an out-of-play seat uses only once it is out for
    good (``RulesetSpec.held_back_kinds``). No query."""
    return ruleset_of(game).held_back_kinds


def is_held_back(seat: Resident | None, inbox: Inbox) -> bool:
    """True when ``seat`` is out of play but may still come back, so that its membership in ``inbox`` (a kind of
    ``held_back_kinds``) neither reads nor posts now (an imprisoned player whom a bust-out
    could still bring back never reads what the eliminated and the spectators say). Computed from the seats' state by
    the ruleset (``RulesetSpec.seats_held_back``) at each call, so the seat joins by itself once no return is
    possible. A living seat is never held back (no query for it)."""
    if seat is None or seat.status == LifeStatus.ALIVE or inbox.kind not in held_back_kinds(inbox.game):
        return False
    return seat.pk in ruleset_of(inbox.game).seats_held_back(inbox.game)


def _membership_reads(seat: Resident | None, membership: Membership | None, inbox: Inbox) -> bool:
    """True when ``membership`` (of ``seat``) lets it read ``inbox``: a reading state (member or banned), a seat not
    held back from the inbox's kind (``is_held_back``) and, for a dead seat in ``dated_kinds`` while the game runs, a
    membership it held at its death (knowledge is dated)."""
    if membership is None or membership.state not in READING_STATES:
        return False
    if is_held_back(seat, inbox):
        return False
    died = knowledge_cutoff(seat)
    return (died is None or inbox.kind not in kinds_of(inbox.game, "dated_kinds") or _is_finished(inbox)
            or membership.since <= died)


# --------------------------------------------------------------------------------------------------------------
# Disclosure after the game (public kinds, open on request, consent): clauses of the same rule, in both renderings
# --------------------------------------------------------------------------------------------------------------

def _draw_notary_q():
    """``Q`` over Inbox: a draw's record (``RulesetSpec.draw_record_q``: a mafia draw's notary, say) of a kind its
    ruleset discloses as such."""
    records = Q(pk__in=[])
    for key, spec in registered_rulesets().items():
        records |= Q(game__ruleset=key) & spec.draw_record_q()
    return policy_tables.kinds_q("draw_record_kinds") & records


def _disclosed_q() -> Q:
    """``Q`` over Inbox: what a finished game discloses to everyone, visitors included (public kinds, the draw's notary,
    consented inboxes)."""
    return Q(game__status=GameStatus.FINISHED) & (_kinds_of_rulesets_q(public_after_game_kinds) | _draw_notary_q()
                                                  | consented_q())


def is_public_now(inbox: Inbox) -> bool:
    """True when ``inbox`` is read by anyone, visitors included, because its game runs and its ruleset keeps its
    kind public meanwhile (``RulesetSpec.public_while_running_kinds``: a game thread read as a
    forum thread is), unless the game's settings make it members-only. Reading it makes nobody a member, a
    spectator or a reader to be told of new posts (``readers_of_inbox`` leaves the public out). The bool form of
    ``_public_now_q``."""
    if inbox.game.status != GameStatus.RUNNING:
        return False
    spec = ruleset_of(inbox.game)
    return inbox.kind in spec.public_while_running_kinds and spec.public_while_running(inbox.game)


def _public_now_q() -> Q:
    """``Q`` over Inbox: what ``is_public_now`` opens, for every registered ruleset that declares public kinds."""
    q = Q(pk__in=[])
    for key, spec in registered_rulesets().items():
        if spec.public_while_running_kinds:
            q |= (Q(game__ruleset=key, game__status=GameStatus.RUNNING, kind__in=spec.public_while_running_kinds)
                  & spec.public_while_running_q())
    return q


def is_disclosed(inbox: Inbox) -> bool:
    """True when ``inbox``'s game is over and its "after the game" column opens it to everyone (the bool form of
    ``_disclosed_q``): a public kind, the draw's notary, a consented personal or secret inbox."""
    if not _is_finished(inbox):
        return False
    if inbox.kind in public_after_game_kinds(inbox.game.ruleset):
        return True
    if inbox.kind in kinds_of(inbox.game, "draw_record_kinds"):
        return ruleset_of(inbox.game).is_draw_record(inbox)
    if inbox.kind in kinds_of(inbox.game, "consent_after_game"):
        return has_consented(inbox, consenters_of(inbox))
    return False


def can_request_inbox(user, inbox: Inbox) -> bool:
    """True when ``user`` may open ``inbox`` by the one logged click: a logged-in user, a finished
    game, a kind "open to anyone who asks". Says nothing of whether they already did."""
    return (_is_authenticated(user) and _is_finished(inbox)
            and inbox.kind in open_on_request_kinds(inbox.game.ruleset))


def _has_requested(user, inbox: Inbox) -> bool:
    return can_request_inbox(user, inbox) and OpenRequest.objects.filter(inbox=inbox, user=user).exists()


def requestable_inboxes(user, game: Game) -> QuerySet[Inbox]:
    """The inboxes of ``game`` ``user`` may open by one logged click, whether opened already or not;
    empty for a visitor or a game not finished. Their titles are public after the game."""
    if not _is_authenticated(user) or game.status != GameStatus.FINISHED:
        return Inbox.objects.none()
    return Inbox.objects.filter(game=game, kind__in=sorted(open_on_request_kinds(game.ruleset)))


def can_read_inbox(user, inbox: Inbox) -> bool:
    """True when ``user`` may see ``inbox`` (its title, messages, counts); the instance form of the rule.

    Args: ``user`` any user or AnonymousUser; ``inbox`` an Inbox (its ``game`` is read).
    Rule: a seat reads by its membership (banned reads, removed sees nothing), staff by their ruleset's grants (a
    superuser flag gives nothing; the knowledge matrix decides), and after the game public kinds, the draw's notary and
    consented personal/secret inboxes to everyone; "open to anyone who asks" kinds to a logged-in user who clicked
    (logged); while the game runs, a ruleset's public kinds to everyone (``is_public_now``). Agrees with
    ``readable_inboxes`` on every case.
    """
    if is_disclosed(inbox):
        return True
    if not _is_authenticated(user):
        return is_public_now(inbox)
    roles = _roles_of(user)
    if _grants_matching(roles, inbox) or _secret_organizer_roles(roles, inbox) or _spectator_grants(user, inbox):
        return True
    if _membership_reads(seat_in(user, inbox.game_id), membership_of(user, inbox), inbox):
        return True
    # Asked last: the public clause reads the game's settings, which a member's read never needs.
    return is_public_now(inbox) or _has_requested(user, inbox)


def post_denial_reason(user, inbox: Inbox, now: datetime | None = None) -> str | None:
    """Why ``user`` may not post in ``inbox`` at ``now`` (aware UTC), or None when they may.

    Call only for a readable inbox: for an unreadable one the answer must be a 404, not a reason.
    Rule: killed and rolled-over inboxes take no posts, banned members read only (a timed ban ends at its time),
    the staff grants of the game's ruleset (``staff_grants_of``), and no posting once the game is over.
    """
    now = now or timezone.now()
    if not _is_authenticated(user):
        return _("Log in to post.")
    if inbox.game.status == GameStatus.FINISHED:
        return _("The game is over; inboxes are closed to posting.")
    if inbox.killed_at is not None:
        return _("This inbox is closed.")
    if inbox.rolled_over_at is not None:
        return _("This inbox continues in a newer one.")
    roles = _roles_of(user)
    if any(grant.post for grant in _grants_matching(roles, inbox) + _spectator_grants(user, inbox)) or \
            _secret_organizer_roles(roles, inbox):
        return None
    membership = membership_of(user, inbox)
    if membership is None and roles and inbox.kind in kinds_of(inbox.game, "vote_only_kinds"):
        return _("Only those who vote here post in this inbox; staff speak in the city inbox or the office.")
    if membership is not None:
        seat = seat_in(user, inbox.game_id)
        reason = seat_state_denial(seat, inbox) if seat is not None else None
        if reason is not None:
            return reason
    if membership is not None and membership.state == MembershipState.MEMBER:
        return None
    if (inbox.kind in kinds_of(inbox.game, "complaint_page_kinds") and membership is not None
            and membership.state == MembershipState.BANNED and membership.banned_until is None):
        # The members write through the complaint page, which signs them by a shared name, never their own; the
        # ruleset says where (its text ``complaint_page_posting``, with the inbox's city as ``%(city)s``).
        return ruleset_of(inbox.game).text("complaint_page_posting") % {
            "city": inbox.city.name if inbox.city_id else ""}
    if membership is not None and membership.state == MembershipState.BANNED:
        if membership.banned_until is not None and membership.banned_until <= now:
            return None
        if membership.banned_until is not None:
            until = time_for(membership.banned_until, user, inbox.game)
            return _("You are banned in this inbox until %(until)s.") % {"until": until}
        return _("You are banned in this inbox.")
    return _("You can read this inbox but not post in it.")


@dataclass(frozen=True)
class SeatStateGrant:
    """Where a seat out of play in a special state of its ruleset's (``RulesetSpec.seat_state``: a spirit, say)
    may post, declared in ``policy_grants["seat_states"]`` {state: grant}: ``post_kinds``, of which
    ``own_city_kinds`` only in inboxes of the seat's city. ``denial``: the player-readable reason a post elsewhere
    is refused; ``moderation``: why a moderator may not change its place elsewhere (with ``%(name)s``)."""

    post_kinds: frozenset[str]
    own_city_kinds: frozenset[str] = frozenset()
    denial: Any = ""
    moderation: Any = ""


def seat_state_grant(seat: Resident, inbox: Inbox) -> SeatStateGrant | None:
    """The ``SeatStateGrant`` of the special state of ``seat`` (a seat not alive) in its game's ruleset, or None
    when it is in none. No query once the seat's ``seat_state_relations`` are selected."""
    key = getattr(seat, "_game_ruleset", None)
    spec = get_ruleset(key) if key else ruleset_of(inbox.game)
    state = spec.seat_state(seat)
    return spec.policy_grants.get("seat_states", {}).get(state) if state is not None else None


def seat_may_post_kind(seat: Resident, inbox: Inbox) -> bool:
    """True when the state of ``seat`` (alive, dead, imprisoned, or a state of its ruleset's such as a
    spirit) lets it post in an inbox like ``inbox`` at all, whatever its membership there says
    (its ruleset's ``dead_post_kinds`` and ``imprisoned_post_kinds``, ``seat_state_grant``: a spirit votes only in the
    voting inboxes of its own
    city)."""
    if seat.status == LifeStatus.ALIVE:
        return True
    if seat.status == LifeStatus.IMPRISONED:
        return inbox.kind in kinds_of(getattr(seat, "_game_ruleset", None) or inbox.game, "imprisoned_post_kinds")
    grant = seat_state_grant(seat, inbox)
    if grant is not None:
        return inbox.kind in grant.post_kinds and (inbox.kind not in grant.own_city_kinds
                                                   or inbox.city_id == seat.city_id)
    return inbox.kind in kinds_of(getattr(seat, "_game_ruleset", None) or inbox.game, "dead_post_kinds")


def seat_state_denial(seat: Resident, inbox: Inbox) -> str | None:
    """Why the state of ``seat`` forbids posting in ``inbox`` (a player-readable reason), or None.

    The policy's own clause, above any membership flag: no unban, add-back or bulk action can give the dead a voice
    among the living, nor a seat in a special state a place its state does not give it. Services that change memberships
    ask it too, so that they refuse such a change instead of making a flag that would mislead.
    """
    if seat_may_post_kind(seat, inbox):
        return None
    spec = ruleset_of(inbox.game)
    if seat.status == LifeStatus.IMPRISONED:
        return spec.text("imprisoned_may_not_post")
    grant = seat_state_grant(seat, inbox)
    if grant is not None:
        return str(grant.denial)
    return spec.text("dead_may_not_post")


def can_post_in_inbox(user, inbox: Inbox, now: datetime | None = None) -> bool:
    """True when ``user`` may read and post in ``inbox`` at ``now`` (aware UTC). See ``post_denial_reason``."""
    return can_read_inbox(user, inbox) and post_denial_reason(user, inbox, now) is None


def _readable_q(user) -> Q:
    """The ``Q`` over Inbox that selects what ``user`` may read: the query form of ``can_read_inbox``."""

    q = _disclosed_q() | _public_now_q()
    if not _is_authenticated(user):
        return q
    q |= Q(game__status=GameStatus.FINISHED) & _kinds_of_rulesets_q(open_on_request_kinds) & Q(
        Exists(OpenRequest.objects.filter(inbox=OuterRef("pk"), user=user)))
    seats = list(_seats_of(user).values())
    for seat in seats:  # the dead: dated in their ruleset's dated kinds while the game runs (``_membership_reads``)
        held = Membership.objects.filter(inbox=OuterRef("pk"), resident=seat.pk, state__in=READING_STATES)
        died = knowledge_cutoff(seat)
        if seat.status != LifeStatus.ALIVE and held_back_kinds(seat.game) and \
                seat.pk in ruleset_of(seat.game).seats_held_back(seat.game):  # ``is_held_back``
            held = held.exclude(inbox__kind__in=held_back_kinds(seat.game))
        dated = kinds_of(getattr(seat, "_game_ruleset", None) or seat.game, "dated_kinds") if died is not None else ()
        if not dated:
            q |= Q(Exists(held))
        else:
            q |= Q(Exists(held)) & (~Q(kind__in=sorted(dated)) | Q(game__status=GameStatus.FINISHED))
            q |= Q(Exists(held.filter(since__lte=died)))
    for role in _roles_of(user):
        ruleset = _ruleset_of_role(role)
        for grant in staff_grants_of(ruleset, role.kind):
            clause = Q(game_id=role.game_id, kind=grant.inbox_kind)
            if grant.own_city:
                clause &= Q(city_id=role.city_id)
            q |= clause
        if role.kind in kinds_of(ruleset, "secret_organizers") and not _is_stand_in(role):
            q |= Q(kind__in=sorted(kinds_of(ruleset, "organized_kinds")), organizer_id=role.pk)
        for kind, grant, condition in conditional_staff_grants_of(ruleset):
            if role.kind == kind:
                q |= Q(game_id=role.game_id, kind=grant.inbox_kind) & condition
    watched = spectated_games(user)
    if watched:  # each ruleset's spectator grants, in the watched games of that ruleset
        for key in registered_rulesets():
            kinds = [g.inbox_kind for g in spectator_grants_of(key)]
            if kinds:
                q |= Q(game_id__in=watched, game__ruleset=key, kind__in=kinds)
    return q


def readable_inboxes(user, game: Game | None = None) -> QuerySet[Inbox]:
    """Inboxes ``user`` may read (of ``game`` when given): the query form of ``can_read_inbox``.

    Returns an unevaluated QuerySet with no duplicates; callers add ordering, annotations and paging.
    Every list, count, search, feed and export of inboxes starts here, so none counts an unreadable inbox.
    """
    qs = Inbox.objects.filter(_readable_q(user))
    if game is not None:
        qs = qs.filter(game=game)
    return qs


def readable_messages(user, messages: QuerySet[Message] | None = None) -> QuerySet[Message]:
    """``messages`` (all messages by default) narrowed to those in inboxes ``user`` may read, and for
    a dead seat to those its knowledge holds: in its ruleset's ``dated_kinds``, while the game runs, the messages
    received up to its death (knowledge is dated; the query form of ``message_cutoff``)."""
    messages = Message.objects.all() if messages is None else messages
    messages = messages.filter(inbox__in=readable_inboxes(user).values("pk"))
    for seat in _seats_of(user).values():
        died = knowledge_cutoff(seat)
        dated = kinds_of(getattr(seat, "_game_ruleset", None) or seat.game, "dated_kinds") if died is not None else ()
        if dated:
            after = Q(inbox__game_id=seat.game_id, inbox__kind__in=sorted(dated), received_at__gt=died)
            messages = messages.exclude(after & ~Q(inbox__game__status=GameStatus.FINISHED))
    return messages


def readers_of_inbox(inbox: Inbox) -> QuerySet:
    """The users who may read what is posted in ``inbox`` now (``can_read_inbox`` and a message received now in their
    ``readable_messages``: a dead seat reading a dated kind's inbox as it was at its death is left out): the audience
    for notifications and e-mail, computed per viewer. Compute it when sending, never earlier: memberships and roles
    change. Returns a User QuerySet without duplicates. After the game a disclosed inbox (``is_disclosed``) is readable
    by every account, and an "open to anyone who asks" inbox by those who asked. An inbox public while its game runs
    (``is_public_now``) is told to its participants only: the public reads it without being told of each post.
    """
    User = get_user_model()
    if is_disclosed(inbox):
        return User.objects.filter(is_active=True)
    q = Q(seats__memberships__inbox=inbox, seats__memberships__state__in=READING_STATES, seats__game=inbox.game_id)
    if inbox.kind in kinds_of(inbox.game, "dated_kinds") and not _is_finished(inbox):
        q &= Q(seats__status=LifeStatus.ALIVE) | Q(seats__died_at__isnull=True)
    if inbox.kind in held_back_kinds(inbox.game):  # ``is_held_back``: not their audience yet
        held_back = ruleset_of(inbox.game).seats_held_back(inbox.game)
        if held_back:
            q &= ~Q(seats__in=held_back)
    if _is_finished(inbox) and inbox.kind in open_on_request_kinds(inbox.game.ruleset):
        q |= Q(archive_open_requests__inbox=inbox)
    ruleset = inbox.game.ruleset
    for kind, grants in get_ruleset(ruleset).policy_grants.get("staff", {}).items():
        for grant in grants:
            if grant.inbox_kind != inbox.kind:
                continue
            clause = Q(staff_roles__game=inbox.game_id, staff_roles__kind=kind)
            if grant.own_city:
                clause &= Q(staff_roles__city=inbox.city_id)
                if kind in staff_kinds_of(ruleset, "city_staff_kinds"):  # standing in for this city's role
                    now = timezone.now()
                    q |= Q(staff_roles__kind=kind, staff_roles__standing_in__city=inbox.city_id,
                           staff_roles__standing_in__starts_at__lte=now, staff_roles__standing_in__ends_at__gt=now,
                           staff_roles__standing_in__ended_at__isnull=True)
            q |= clause
    if inbox.organizer_id is not None and inbox.kind in kinds_of(ruleset, "organized_kinds"):
        organizers = sorted(kinds_of(ruleset, "secret_organizers"))
        q |= Q(staff_roles__pk=inbox.organizer_id, staff_roles__kind__in=organizers)
    for kind, grant, condition in conditional_staff_grants_of(ruleset):
        if grant.inbox_kind == inbox.kind and Inbox.objects.filter(pk=inbox.pk).filter(condition).exists():
            q |= Q(staff_roles__game=inbox.game_id, staff_roles__kind=kind)
    if any(g.inbox_kind == inbox.kind for g in spectator_grants_of(ruleset)):  # spectators: as ``spectated_games`` says
        q |= Q(pk__in=Spectator.objects.filter(game=inbox.game_id, left_at__isnull=True)
               .exclude(user__in=Resident.objects.filter(game=inbox.game_id).values("user"))
               .exclude(user__in=StaffRole.objects.filter(game=inbox.game_id).values("user")).values("user"))
    return User.objects.filter(pk__in=User.objects.filter(q).values("pk"))


#: The fields of ``Membership`` (name -> attribute) that ``access_inbox_by_id`` reads with the inbox: the whole row.
_MEMBERSHIP_COLUMNS = {"id": "id", "inbox": "inbox_id", "resident": "resident_id", "state": "state", "since": "since",
                       "banned_until": "banned_until", "reason": "reason"}


def _inbox_by_public_id(public_id):
    return (Inbox.objects.select_related("game", "city", "resident", "organizer").filter(public_id=public_id)
            .order_by()[:1])


def _watches(user_id):
    return Exists(Spectator.objects.filter(game=OuterRef("game_id"), user_id=user_id, left_at__isnull=True))


def _inbox_with_game_by_public_id(public_id):
    """The inbox with its game alone: what a post reads (the city, nominee and organizer are used by their ids)."""
    return Inbox.objects.select_related("game").filter(public_id=public_id).order_by()[:1]


def _inbox_for_viewer(public_id, user_id, seat_ids, inbox_by_public_id=_inbox_by_public_id):
    """The inbox, annotated with whether the viewer watches its game as a spectator and with the membership of the
    viewer's seat (a user holds one seat per game, and a seat one membership per inbox: at most one row)."""
    return (inbox_by_public_id(public_id).annotate(viewer_watches=_watches(user_id))
            .annotate(_viewer_membership=FilteredRelation(
                "memberships", condition=Q(memberships__resident__in=seat_ids)),
                **{f"_vm_{column}": F(f"_viewer_membership__{field}") for field, column in _MEMBERSHIP_COLUMNS.items()}))


_INBOX_FOR_ANONYMOUS = PreparedQuery(_inbox_by_public_id, strs=("public_id",))
_INBOX_FOR_VIEWER = PreparedQuery(lambda public_id, user_id: _inbox_by_public_id(public_id).annotate(
    viewer_watches=_watches(user_id)), ints=("user_id",), strs=("public_id",))
_INBOX_FOR_SEATED_VIEWER = PreparedQuery(_inbox_for_viewer, ints=("user_id",), strs=("public_id",),
                                         int_lists=("seat_ids",))
def access_inbox_by_id(user, inbox_id) -> Inbox:
    """The only way a request's inbox id becomes an Inbox (Zulip's ``access_stream_by_id``); a post's is
    ``access_inbox_for_post``.

    Args: ``inbox_id`` the inbox's opaque public id (``kernel.public_ids``) from a URL or a form; the database id
    never reaches a page (a sequential id would count the inboxes the viewer may not read). Returns
    the Inbox with its game, city, nominee and organizer loaded. Raises ``Http404``, the same one, for a
    malformed, missing or forbidden id: a forbidden inbox must be indistinguishable from one that does not exist
    (a removed member sees nothing of it, not even its title).
    """
    if not is_public_id(inbox_id):
        raise Http404("No such inbox.")
    # The same queries run whether the id exists or not (roles, seats, the inbox), so that the response time does
    # not tell a forbidden inbox from a missing one either. Whether the viewer watches the inbox's game as a
    # spectator, and the membership of their seat there, are read in the inbox's own statement.
    _roles_of(user)
    seats = _seats_of(user)
    if seats:
        seat_ids = [s.pk for s in seats.values()]
        found = _INBOX_FOR_SEATED_VIEWER(public_id=str(inbox_id), user_id=user.pk, seat_ids=seat_ids)
    elif _is_authenticated(user):
        found = _INBOX_FOR_VIEWER(public_id=str(inbox_id), user_id=user.pk)
    else:
        found = _INBOX_FOR_ANONYMOUS(public_id=str(inbox_id))
    inbox = found[0] if found else None
    if inbox is not None and _is_authenticated(user):
        _note_watching(user, inbox)
    if seats and inbox is not None and seat_in(user, inbox.game_id) is not None:
        cache = getattr(user, "_mafia_memberships", None)
        if cache is None:
            cache = user._mafia_memberships = {}
        values = [getattr(inbox, f"_vm_{column}") for column in _MEMBERSHIP_COLUMNS.values()]
        cache[inbox.pk] = (Membership.from_db(inbox._state.db, list(_MEMBERSHIP_COLUMNS.values()), values)
                           if values[0] is not None else None)
    if inbox is None or not can_read_inbox(user, inbox):
        raise Http404("No such inbox.")
    return inbox


def _note_watching(user, inbox: Inbox) -> None:
    """Cache whether the logged-in ``user`` watches ``inbox``'s game as a spectator, from the inbox's
    ``viewer_watches`` column and their seat and roles there (as ``spectated_games`` says), for ``spectator_of``."""
    watching = getattr(user, "_mafia_watching", None)
    if watching is None:
        watching = user._mafia_watching = {}
    watching[inbox.game_id] = (inbox.viewer_watches and seat_in(user, inbox.game_id) is None
                               and not staff_roles_in(user, inbox.game_id))


def access_inbox_for_post(user, inbox_id, *, form_key: str | None = None) -> Inbox:
    """A post's way from a request's inbox id to its Inbox (as ``access_inbox_by_id``): inside the post's transaction,
    the inbox is locked and read with what the post is decided on (``lock_for_post``), and returned when the logged-in
    ``user`` may read it. ``form_key``: the post form's key, whose message is looked up too (``form_key_message_id``).
    Raises ``Http404``, the same one, for a malformed, missing or forbidden id (a forbidden inbox is indistinguishable
    from a missing one); ``ValueError`` for an anonymous user; ``TransactionManagementError`` outside a transaction."""
    if not is_public_id(inbox_id):
        raise Http404("No such inbox.")
    _roles_of(user)  # the viewer's seats and roles, which the checks read, before the lock is taken
    _seats_of(user)
    inbox = lock_for_post(user, str(inbox_id), form_key=form_key)
    # A viewer without a membership has them read again under the lock, whether the inbox exists or not, so that
    # the statements do not tell a forbidden inbox from a missing one (as ``access_inbox_by_id``).
    _roles_of(user)
    _seats_of(user)
    if inbox is not None and hasattr(inbox, "viewer_watches"):  # read without a membership: as a page's read
        _note_watching(user, inbox)
    if inbox is None or not can_read_inbox(user, inbox):
        raise Http404("No such inbox.")
    return inbox
