"""The viewer's seats, staff roles and (under a post's lock) membership, as the access policy reads them
(``inboxes.policies`` caches them on the user for the request). Prepared once
(``kernel.prepared``).

The seats come each joined with every staff role the viewer holds (one row per seat and role, the role's columns
NULL when there is none), so that a player's request reads both in one statement. A viewer without a seat has no
row: their roles are then read alone.
"""
from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.db.models import Exists, F, FilteredRelation, OuterRef, Subquery

from cities.models import Resident, StaffRole
from kernel.prepared import NextId, PreparedQuery
from kernel.rulesets import seat_state_relations

from . import hooks as post_hooks
from .models import Inbox, Membership, Message, Spectator

_ROLE_FIELDS = ("id", "game_id", "kind", "city_id", "user_id")
# Ordered by columns of the row itself: the model's default ordering would join games and cities.
# Each role with its game's ruleset (``_game_ruleset``): the access policy reads that ruleset's grants.
_ROLES_OF_USER = PreparedQuery(lambda user_id: StaffRole.objects.filter(user_id=user_id).only(*_ROLE_FIELDS)
                               .annotate(_game_ruleset=F("game__ruleset"))
                               .order_by("game_id", "kind", "city_id", "id"), ints=("user_id",))
# One seat per game: no order needed (the model's default would sort by city and name).
# Each seat with its game's ruleset (``_game_ruleset``): a post reads the post hooks of those rulesets only.
# Each seat with the seat state its ruleset keeps (``seat_state_relations``): the policy asks the ruleset about it.
_SEATS_AND_ROLES_OF_USER = PreparedQuery(lambda user_id: Resident.objects.filter(user_id=user_id).select_related(
    "city", *seat_state_relations()).annotate(_game_ruleset=F("game__ruleset"),
                                              _role_game_ruleset=F("user__staff_roles__game__ruleset"),
                     **{f"_role_{f}": F(f"user__staff_roles__{f}") for f in _ROLE_FIELDS}).order_by(),
    ints=("user_id",))


def _role_order(role: StaffRole) -> tuple:
    """The order of ``_ROLES_OF_USER`` (PostgreSQL puts a NULL city last)."""
    return role.game_id, role.kind, role.city_id is None, role.city_id or 0, role.pk


def seats_and_roles_of(user_id: int) -> tuple[dict[int, Resident], list[StaffRole]]:
    """The seats (``{game id: Resident}``, each with its city) and the staff roles (``StaffRole`` with only
    ``id, game_id, kind, city_id, user_id`` loaded, ordered by game, kind, city and id) of the user ``user_id`` in
    every game, each with its game's ruleset key as ``_game_ruleset``: one statement when the user holds a seat,
    two otherwise."""
    rows = _SEATS_AND_ROLES_OF_USER(user_id=user_id)
    if not rows:
        return {}, _ROLES_OF_USER(user_id=user_id)
    seats: dict[int, Resident] = {}
    roles: dict[int, StaffRole] = {}
    for seat in rows:
        seats.setdefault(seat.game_id, seat)
        if seat._role_id is not None and seat._role_id not in roles:
            role = roles[seat._role_id] = StaffRole.from_db(seat._state.db, list(_ROLE_FIELDS),
                                                            [getattr(seat, f"_role_{f}") for f in _ROLE_FIELDS])
            role._game_ruleset = seat._role_game_ruleset
    return seats, sorted(roles.values(), key=_role_order)


def forget_viewer_cache(user) -> None:
    """Drop the per-request role, seat and membership caches of ``user`` (after changing them, or before a
    check that must read fresh rows under a lock)."""
    for attr in ("_mafia_staff_roles", "_mafia_seats", "_mafia_memberships", "_mafia_spectating",
                 "_mafia_watching"):
        if hasattr(user, attr):
            delattr(user, attr)


def _hook_reads(hooks) -> dict:
    """The ``locked_reads`` of every post hook of ``hooks`` merged (name -> expression over the membership): the
    statement that locks a membership serves a post in an inbox of any kind, whose hook is known only once the
    inbox is read. Raises ``ImproperlyConfigured`` when two hooks read the same name (one would get the other's
    value)."""
    merged: dict = {}
    for hook in hooks:
        for name, read in hook.locked_reads().items():
            if name in merged:
                raise ImproperlyConfigured(f"two post hooks read {name!r} under a post's lock: name them apart")
            merged[name] = read
    return merged


def _locked_membership(hooks):
    """The statement locking a user's membership of the inbox of a public id, read with their seat, the inbox and
    its game, the post's message id reserved (``next_message_id``), the id of the message the user already posted
    with the post form's key (``form_key_message_id``; "" matches none) and the reads of ``hooks``
    (``_hook_reads``); built afresh for each compilation (a ``FilteredRelation`` serves one queryset)."""
    def build(public_id, user_id, form_key):
        posted = Message.objects.filter(author_user_id=user_id, idempotency_key=form_key).values("id")[:1]
        seat_state = (f"resident__{name}" for name in seat_state_relations())
        return (Membership.objects.select_for_update(of=("self",))
                .select_related("resident", "inbox__game", *seat_state)
                .filter(inbox__public_id=public_id, resident__user_id=user_id)
                .annotate(next_message_id=NextId(Message), form_key_message_id=Subquery(posted))
                .annotate(**_hook_reads(hooks)).order_by("id")[:1])
    return PreparedQuery(build, ints=("user_id",), strs=("public_id", "form_key"))


#: By the registered post hooks (a tuple): the statement and the names of the hooks' reads (built once per process).
_LOCKED_MEMBERSHIP: dict = {}

#: The inbox row's lock, taken by a post first (``lock_for_post``): its rows are not read.
_INBOX_LOCK = PreparedQuery(lambda public_id: Inbox.objects.select_for_update(of=("self",))
                            .filter(public_id=public_id).order_by().values_list("id"), strs=("public_id",))

#: The inbox read under its lock by the post of a user without a membership of it (staff, a spectator), with
#: whether the user watches its game as a spectator (``viewer_watches``).
_LOCKED_INBOX = PreparedQuery(lambda public_id, user_id, form_key: Inbox.objects.select_related("game")
                              .filter(public_id=public_id).order_by().annotate(
                                  next_message_id=NextId(Message),
                                  form_key_message_id=Subquery(Message.objects.filter(
                                      author_user_id=user_id, idempotency_key=form_key).values("id")[:1]),
                                  viewer_watches=Exists(Spectator.objects.filter(
                                      game=OuterRef("game_id"), user_id=user_id, left_at__isnull=True))),
                              ints=("user_id",), strs=("public_id", "form_key"))


def _post_hooks_of(user, rulesets) -> tuple:
    """The post hooks whose ``locked_reads`` a post by ``user`` reads: those of ``rulesets`` when given (the inbox's
    game's, known to the caller), else of the rulesets of the games where the request read the user's seats (a
    membership, hence a hook's reads, exists only there), else, the seats unread, every registered hook."""
    if rulesets is None:
        seats = getattr(user, "_mafia_seats", None)
        known = {getattr(seat, "_game_ruleset", None) for seat in seats.values()} if seats is not None else {None}
        if None in known:
            return tuple(post_hooks.POST_HOOKS.values())
        rulesets = known
    return post_hooks.hooks_of_rulesets(rulesets)


def lock_for_post(user, inbox_id: str, *, form_key: str | None = None, rulesets=None) -> Inbox | None:
    """Lock the row of the inbox of public id ``inbox_id`` for a post by the logged-in ``user`` and read what the
    post is decided on, as it is once the lock is held, in one round trip: ``SELECT ... FOR UPDATE`` of the inbox,
    then (a statement whose snapshot is taken once the lock is granted) the user's membership of the inbox, locked
    too, with their seat, the inbox and its game, the post's message id reserved, the form key's message and the
    reads of the inbox kind's post hook (``PostHook.locked_reads``: since the kind is not known before the inbox is
    read, those of the hooks of ``rulesets`` (ruleset keys: the inbox's game's when the caller knows it), else of
    the rulesets of the user's seats as the request read them, ``_post_hooks_of``; never another ruleset's).

    This is the post's only read of its inbox, so the caller decides whether the user may read it
    (``access_inbox_for_post``, ``can_read_inbox``). The lock is held for the post's writes and commit alone; the
    receive time, read after this, is later than that of every post before it. A ban, a removal or a
    death changes the membership row under its lock, so a post decided on it is ordered wholly before or after
    them. The membership and the seat (its city as the request read it) go to the policy's caches for the checks
    that follow (``seat_in``, ``membership_of``, ``can_read_inbox``, ``post_denial_reason``); the hook's reads go on
    the seat as ``locked_reads`` (``(inbox id, {name: value})``). A user without a membership (staff, a spectator)
    has every cache dropped but the membership's (none), and the inbox is read alone, in a second round trip, with
    whether the user watches its game (``viewer_watches``).

    Inside the caller's transaction (else ``TransactionManagementError``). Returns the inbox (its game loaded,
    ``next_message_id`` reserved where the database has a sequence, else None, and ``form_key_message_id`` the
    message id or None), or None when there is none of that id. Raises ``ValueError`` for an anonymous user.
    """
    if user is None or not getattr(user, "is_authenticated", False):
        raise ValueError("only a logged-in user's post locks an inbox")
    # A database without row locks (SQLite) serializes writing transactions as a whole: there is nothing to lock.
    lock = [_INBOX_LOCK.statement(public_id=inbox_id)] if connection.features.has_select_for_update else []
    hooks = _post_hooks_of(user, rulesets)
    prepared = _LOCKED_MEMBERSHIP.get(hooks)
    if prepared is None:
        names = tuple(name for name, read in _hook_reads(hooks).items() if not isinstance(read, FilteredRelation))
        prepared = _LOCKED_MEMBERSHIP.setdefault(hooks, (_locked_membership(hooks), names))
    query, reads = prepared
    found = query(preceded_by=lock, public_id=inbox_id, user_id=user.pk, form_key=form_key or "")
    membership = found[0] if found else None
    if membership is None:
        forget_viewer_cache(user)  # a seat or a role may have changed while the post waited: read again
        locked = _LOCKED_INBOX(public_id=inbox_id, user_id=user.pk, form_key=form_key or "")
        if not locked:
            return None
        user._mafia_memberships = {locked[0].pk: None}  # none: the locked statement found no row
        return locked[0]
    locked = membership.inbox
    locked.next_message_id, locked.form_key_message_id = membership.next_message_id, membership.form_key_message_id
    if reads:
        membership.resident.locked_reads = (locked.pk, {name: getattr(membership, name) for name in reads})
    seats = getattr(user, "_mafia_seats", None)
    if seats is not None:
        seat, before = membership.resident, seats.get(locked.game_id)
        if before is not None and before.city_id == seat.city_id and Resident.city.is_cached(before):
            seat.city = before.city  # a seat's city never changes: the one the request read serves
        seat._game_ruleset = locked.game.ruleset
        seats[locked.game_id] = seat
    cache = getattr(user, "_mafia_memberships", None)
    if cache is None:
        cache = user._mafia_memberships = {}
    cache[locked.pk] = membership
    watching = getattr(user, "_mafia_watching", None)
    if watching is None:
        watching = user._mafia_watching = {}
    watching[locked.game_id] = False  # a seat in the game: no spectator of it
    return locked
