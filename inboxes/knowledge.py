"""The knowledge matrix: what a viewer may know, while the game runs, about a resident or a city's night
(``visible_alignment``, ``knows_seat_role``, ``knows_secret_staff``, ``knows_night_of``, ...).
A clause of the one access policy (DESIGN.md "The access policy"); knowledge is dated: a dead seat keeps what it
knew at death."""
from __future__ import annotations

from cities.models import HOST_STAFF_KIND, Alignment, Game, GameStatus, LifeStatus, Resident, StaffRole
from cities.staff_kinds import hosts_of, staff_kinds_of
from inboxes.policy_tables import kinds_of
from kernel.ruleset_parts import SeatRole
from kernel.rulesets import ruleset_of

from .models import Inbox
from .policies import (
    _is_authenticated,
    _is_finished,
    holds_role,
    holds_role_of,
    knowledge_cutoff,
    membership_of,
    seat_in,
    staff_roles_in,
)

# --------------------------------------------------------------------------------------------------------------
# The knowledge matrix
# --------------------------------------------------------------------------------------------------------------

def visible_alignment(viewer, resident: Resident) -> str | None:
    """The alignment of ``resident`` as ``viewer`` may know it, or None when it is secret to them.

    Known to: everyone once the game is over or once a death announcement disclosed it; the resident themself;
    the Consigliere; the hosts when the game's ruleset says they know every alignment
    (``policy_grants["hosts_know_alignments"]``); the mafia of the same city, of their own city's mafia only; whom
    the game's ruleset names (``seat_knows_alignment``: a commissar who checked the resident, say).
    """
    game = resident.game
    if game.status == GameStatus.FINISHED:
        return resident.alignment
    if resident.alignment_announced and resident.status != LifeStatus.ALIVE:
        return resident.alignment
    if not _is_authenticated(viewer):
        return None
    seat = seat_in(viewer, resident.game_id)
    if seat is not None and seat.pk == resident.pk:
        return resident.alignment
    if holds_role_of(viewer, game, "night_staff_kinds"):
        return resident.alignment
    if _hosts_know_alignments(game) and any(holds_role(viewer, resident.game_id, kind) for kind in hosts_of(game)):
        return resident.alignment
    if (seat is not None and seat.alignment == Alignment.MAFIA and seat.city_id == resident.city_id
            and resident.alignment == Alignment.MAFIA):
        return Alignment.MAFIA
    if seat is not None and ruleset_of(game).seat_knows_alignment(seat, resident):
        return resident.alignment
    return None


def _hosts_know_alignments(game: Game) -> bool:
    """True when the game's ruleset lets its hosts (the host and co-hosts) know every alignment, as a host
    who deals the roles does: the ruleset's ``policy_grants["hosts_know_alignments"]``."""
    return bool(ruleset_of(game).policy_grants.get("hosts_know_alignments"))


def can_see_members(viewer, inbox: Inbox) -> bool:
    """True when ``viewer``, who may read ``inbox``, may also see its member list. Always, except in the kinds of
    its ruleset's ``secret_member_kinds`` while the game runs (a commissar's check channel: its member is the
    commissar, whom the Consigliere must not learn; a mafia complaint: its members are the mafia, whom the
    Procurator must not learn); there only members see it, and everyone after the game."""
    if inbox.kind not in kinds_of(inbox.game, "secret_member_kinds") or _is_finished(inbox):
        return True
    return membership_of(viewer, inbox) is not None


def knows_night_of(viewer, city) -> bool:
    """True when ``viewer`` may see ``city``'s night business: the godfather election,
    its votes, the godfather, the night decisions and their targets. Known to the living mafia of the city and
    the Consigliere; everyone after the game. Never the Procurator, a Tribune, a commissar or another city."""
    if city.game.status == GameStatus.FINISHED:
        return True
    if not _is_authenticated(viewer):
        return False
    if holds_role_of(viewer, city.game, "night_staff_kinds"):
        return True
    seat = seat_in(viewer, city.game_id)
    return (seat is not None and seat.alignment == Alignment.MAFIA and seat.city_id == city.pk
            and seat.status == LifeStatus.ALIVE)


def may_enter_night_decision(viewer, city, godfather) -> bool:
    """Whether the night page offers ``viewer`` the kill and touring forms of ``city``: the
    Consigliere, or ``godfather`` (the city's living godfather, a Resident or None) himself. The service decides
    each submission (the Consigliere only while the godfather is silent)."""
    if holds_role_of(viewer, city.game, "night_staff_kinds"):
        return True
    return godfather is not None and _is_authenticated(viewer) and godfather.user_id == viewer.pk


def knows_check_asker(viewer, check) -> bool:
    """True when ``viewer`` may learn who asked a commissar ``check``: the commissar who
    asked, and everyone after the game. Never the Consigliere (who answers without learning the asker)."""
    if check.game.status == GameStatus.FINISHED:
        return True
    seat = seat_in(viewer, check.game_id) if _is_authenticated(viewer) else None
    return seat is not None and seat.pk == check.commissar_id


def knows_seat_role(viewer, resident: Resident, role: SeatRole) -> bool:
    """True when ``viewer`` may learn that ``resident`` holds the secret rank ``role`` (a ``SeatRole`` of the
    game's ruleset: its row of the knowledge matrix, such as a commissar or a godfather).

    Whether the rank is held is the ruleset's answer (``holds_seat_role``); who may know it is decided here: everyone
    after the game, and once an announced death disclosed it (``disclosed_by_announcement``); the staff
    of ``staff_kinds`` and, of the seat's city, ``city_staff_kinds``; a seat holding the rank (``peers``) or of
    ``city_alignment`` in the same city, as of its knowledge cutoff (dated: a dead seat knows the holders of the
    moment of its death, none named afterwards). False for anyone else and for a rank not held.
    """
    spec = ruleset_of(resident.game)
    if resident.game.status == GameStatus.FINISHED:
        return spec.holds_seat_role(resident, role.key)
    if role.disclosed_by_announcement and resident.alignment_announced and resident.status != LifeStatus.ALIVE:
        return spec.holds_seat_role(resident, role.key)
    if not _is_authenticated(viewer):
        return False
    if any(holds_role(viewer, resident.game_id, kind) for kind in role.staff_kinds) or any(
            holds_role(viewer, resident.game_id, kind, city_id=resident.city_id) for kind in role.city_staff_kinds):
        return spec.holds_seat_role(resident, role.key)
    seat = seat_in(viewer, resident.game_id)
    if seat is None:
        return False
    if role.peers and spec.holds_seat_role(seat, role.key):
        return seat.pk == resident.pk or spec.holds_seat_role(resident, role.key, knowledge_cutoff(seat))
    if role.city_alignment is not None and seat.alignment == role.city_alignment and seat.city_id == resident.city_id:
        return spec.holds_seat_role(resident, role.key, knowledge_cutoff(seat))
    return False


def known_seat_roles(viewer, resident: Resident) -> list[SeatRole]:
    """The secret ranks of ``resident`` that ``viewer`` may learn (``knows_seat_role``), in the order the game's
    ruleset lists them (``RulesetSpec.seat_roles``); [] in a ruleset without ranks."""
    return [role for role in ruleset_of(resident.game).seat_roles if knows_seat_role(viewer, resident, role)]


def seat_role(game: Game, key: str) -> SeatRole:
    """The ``SeatRole`` ``key`` of ``game``'s ruleset. Raises ``ValueError`` when the ruleset has none of that key
    (a typo would hide a rank silently)."""
    for role in ruleset_of(game).seat_roles:
        if role.key == key:
            return role
    raise ValueError(f"the ruleset of {game} has no seat role {key!r}")


def in_living_rosters(viewer, game: Game | int) -> bool:
    """False when ``viewer``'s seat in ``game`` is not living: the rows of the knowledge matrix that say
    "living" (the police station's roster of commissars, the mafia's night business) drop the dead from the
    moment of death (knowledge is dated). True for anyone without a seat (staff, visitors)."""
    seat = seat_in(viewer, game) if _is_authenticated(viewer) else None
    return seat is None or seat.status == LifeStatus.ALIVE


def knows_secret_staff(viewer, game: Game) -> bool:
    """True when ``viewer`` may learn who holds a kind of the game's ruleset's ``secret_staff_kinds`` (a
    Consigliere, say): the host, the holders of those kinds, all mafia; everyone after the game."""
    if game.status == GameStatus.FINISHED:
        return True
    if not _is_authenticated(viewer):
        return False
    if holds_role(viewer, game, HOST_STAFF_KIND) or holds_role_of(viewer, game, "secret_staff_kinds"):
        return True
    seat = seat_in(viewer, game)
    return seat is not None and seat.alignment == Alignment.MAFIA


def visible_staff(viewer, game: Game) -> list[StaffRole]:
    """The staff roles of ``game`` with their holders, as ``viewer`` may see them (the holders of the ruleset's
    ``secret_staff_kinds`` hidden unless ``knows_secret_staff``). Returns a list in the order of the ruleset's
    ``staff_kinds`` (the host first; a city's staff by city)."""
    order = {kind: rank for rank, kind in enumerate(ruleset_of(game).staff_kinds)}
    secret = staff_kinds_of(game, "secret_staff_kinds")
    roles = list(StaffRole.objects.filter(game=game).select_related("user", "city"))
    if not knows_secret_staff(viewer, game):
        roles = [r for r in roles if r.kind not in secret]
    elif game.status != GameStatus.FINISHED and not staff_roles_in(viewer, game):
        # A dead mafioso knows the Consigliere of the moment of death, not one appointed afterwards.
        cutoff = knowledge_cutoff(seat_in(viewer, game))
        if cutoff is not None:
            roles = [r for r in roles if r.kind not in secret or r.since <= cutoff]
    return sorted(roles, key=lambda r: (order.get(r.kind, len(order)), r.city.number if r.city else 0))
