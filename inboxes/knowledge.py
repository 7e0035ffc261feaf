"""The knowledge matrix of RULES.md L-STAFF-6: what a viewer may know about a resident or a city's night
(``visible_alignment``, ``knows_commissar``, ``knows_godfather``, ``knows_consigliere``, ``knows_night_of``, ...).
A clause of the one access policy (DESIGN.md "The access policy"); knowledge is dated: a dead seat keeps what it
knew at death."""
from __future__ import annotations

from datetime import datetime

from cities.models import Alignment, Game, GameStatus, LifeStatus, Resident, StaffKind, StaffRole
from inboxes.policy_tables import SECRET_MEMBER_KINDS
from kernel.rulesets import ruleset_of
from roles.models import CommissarCheck

from .models import Inbox
from .policies import (
    _is_authenticated,
    _is_finished,
    holds_role,
    knowledge_cutoff,
    membership_of,
    seat_in,
    staff_roles_in,
)

# --------------------------------------------------------------------------------------------------------------
# The knowledge matrix (L-STAFF-6)
# --------------------------------------------------------------------------------------------------------------

def visible_alignment(viewer, resident: Resident) -> str | None:
    """The alignment of ``resident`` as ``viewer`` may know it (L-STAFF-6), or None when it is secret to them.

    Known to: everyone once the game is over or once a death announcement disclosed it (L-DEATH-2); the
    resident themself; the Consigliere; the mafia of the same city, of their own city's mafia only; the living
    commissar who checked the resident (L-NIGHT-5: the answer is theirs).
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
    if holds_role(viewer, resident.game_id, StaffKind.CONSIGLIERE):
        return resident.alignment
    if _hosts_know_alignments(game) and any(holds_role(viewer, resident.game_id, kind)
                                            for kind in (StaffKind.PROCURATOR, StaffKind.COHOST)):
        return resident.alignment
    if (seat is not None and seat.alignment == Alignment.MAFIA and seat.city_id == resident.city_id
            and resident.alignment == Alignment.MAFIA):
        return Alignment.MAFIA
    if seat is not None and seat.is_commissar and seat.city_id == resident.city_id and _checked(seat, resident):
        return resident.alignment
    return None


def _hosts_know_alignments(game: Game) -> bool:
    """True when the game's ruleset lets its hosts know every alignment (M21's host deals the roles, M-SETUP-4):
    the ruleset's ``policy_grants["hosts_know_alignments"]``."""
    return bool(ruleset_of(game).policy_grants.get("hosts_know_alignments"))


def _checked(commissar: Resident, resident: Resident) -> bool:
    """True when ``commissar`` checked ``resident`` (L-NIGHT-5); one query, only for a commissar viewer."""

    return CommissarCheck.objects.filter(commissar=commissar, target=resident).exists()


def can_see_members(viewer, inbox: Inbox) -> bool:
    """True when ``viewer``, who may read ``inbox``, may also see its member list. Always, except in the kinds of
    ``SECRET_MEMBER_KINDS`` while the game runs: the commissar check channel (L-INBOX-15, L-NIGHT-5: its member
    is the commissar, whom the Consigliere must not learn) and a mafia complaint (L-IMPEACH-3: its members are
    the mafia, whom the Procurator must not learn); there only members see it, and everyone after the game."""
    if inbox.kind not in SECRET_MEMBER_KINDS or _is_finished(inbox):
        return True
    return membership_of(viewer, inbox) is not None


def knows_night_of(viewer, city) -> bool:
    """True when ``viewer`` may see ``city``'s night business (L-NIGHT-1..4, L-STAFF-6): the godfather election,
    its votes, the godfather, the night decisions and their targets. Known to the living mafia of the city and
    the Consigliere; everyone after the game. Never the Procurator, a Tribune, a commissar or another city."""
    if city.game.status == GameStatus.FINISHED:
        return True
    if not _is_authenticated(viewer):
        return False
    if holds_role(viewer, city.game_id, StaffKind.CONSIGLIERE):
        return True
    seat = seat_in(viewer, city.game_id)
    return (seat is not None and seat.alignment == Alignment.MAFIA and seat.city_id == city.pk
            and seat.status == LifeStatus.ALIVE)


def may_enter_night_decision(viewer, city, godfather) -> bool:
    """Whether the night page offers ``viewer`` the kill and touring forms of ``city`` (L-NIGHT-2): the
    Consigliere, or ``godfather`` (the city's living godfather, a Resident or None) himself. The service decides
    each submission (the Consigliere only while the godfather is silent)."""
    if holds_role(viewer, city.game_id, StaffKind.CONSIGLIERE):
        return True
    return godfather is not None and _is_authenticated(viewer) and godfather.user_id == viewer.pk


def knows_check_asker(viewer, check) -> bool:
    """True when ``viewer`` may learn who asked a commissar ``check`` (L-NIGHT-5, L-STAFF-6): the commissar who
    asked, and everyone after the game. Never the Consigliere (who answers without learning the asker)."""
    if check.game.status == GameStatus.FINISHED:
        return True
    seat = seat_in(viewer, check.game_id) if _is_authenticated(viewer) else None
    return seat is not None and seat.pk == check.commissar_id


def knows_commissar(viewer, resident: Resident) -> bool:
    """True when ``viewer`` may learn that ``resident`` is their city's commissar (L-STAFF-6, L-COMM-4).

    Known to: the Procurator, the Tribune of that city, the commissar, the other commissars (police station);
    everyone after the game or once an announced death disclosed it (L-DEATH-2). Never the Consigliere.
    False for a resident who is not a commissar.
    """
    if not resident.is_commissar:
        return False
    if resident.game.status == GameStatus.FINISHED:
        return True
    if resident.alignment_announced and resident.status != LifeStatus.ALIVE:
        return True
    if not _is_authenticated(viewer):
        return False
    if holds_role(viewer, resident.game_id, StaffKind.PROCURATOR):
        return True
    if holds_role(viewer, resident.game_id, StaffKind.TRIBUNE, city_id=resident.city_id):
        return True
    seat = seat_in(viewer, resident.game_id)
    if seat is None or not seat.is_commissar:
        return False
    if seat.pk == resident.pk:
        return True
    # Dated knowledge: a dead commissar knows the commissars of the moment of death, none named afterwards.
    return was_commissar_at(resident, knowledge_cutoff(seat))


def knows_godfather(viewer, resident: Resident) -> bool:
    """True when ``viewer`` may learn that ``resident`` is their city's godfather (L-NIGHT-3).

    Known to the Consigliere and the mafia of that city; everyone after the game. Dated (L-STAFF-6 [interp]): a
    dead mafioso knows the godfather of the moment of death (``was_godfather_at``), never one made afterwards.
    """
    if resident.game.status == GameStatus.FINISHED:
        return resident.is_godfather
    if not _is_authenticated(viewer):
        return False
    if holds_role(viewer, resident.game_id, StaffKind.CONSIGLIERE):
        return resident.is_godfather
    seat = seat_in(viewer, resident.game_id)
    if seat is None or seat.alignment != Alignment.MAFIA or seat.city_id != resident.city_id:
        return False
    return was_godfather_at(resident, knowledge_cutoff(seat))


def was_godfather_at(resident: Resident, moment: datetime | None) -> bool:
    """True when ``resident`` was their city's godfather at ``moment`` (aware UTC; None: now). A rank without a
    start date is older than the dates (counted from the start)."""
    if moment is None:
        return resident.is_godfather
    since, until = resident.godfather_since, resident.godfather_until
    if not resident.is_godfather and until is None:
        return False
    return (since is None or since <= moment) and (until is None or until > moment)


def was_commissar_at(resident: Resident, moment: datetime | None) -> bool:
    """True when ``resident`` was a commissar at ``moment`` (aware UTC; None: now)."""
    if not resident.is_commissar:
        return False
    return moment is None or resident.commissar_since is None or resident.commissar_since <= moment


def in_living_rosters(viewer, game: Game | int) -> bool:
    """False when ``viewer``'s seat in ``game`` is not living: the rows of the knowledge matrix that say
    "living" (the police station's roster of commissars, the mafia's night business) drop the dead from the
    moment of death (L-STAFF-6 [interp], L-DEATH-1). True for anyone without a seat (staff, visitors)."""
    seat = seat_in(viewer, game) if _is_authenticated(viewer) else None
    return seat is None or seat.status == LifeStatus.ALIVE


def knows_consigliere(viewer, game: Game) -> bool:
    """True when ``viewer`` may learn who the Consigliere is: Procurator, Consigliere, all mafia (L-STAFF-6)."""
    if game.status == GameStatus.FINISHED:
        return True
    if not _is_authenticated(viewer):
        return False
    if holds_role(viewer, game, StaffKind.PROCURATOR) or holds_role(viewer, game, StaffKind.CONSIGLIERE):
        return True
    seat = seat_in(viewer, game)
    return seat is not None and seat.alignment == Alignment.MAFIA


def visible_staff(viewer, game: Game) -> list[StaffRole]:
    """The staff roles of ``game`` with their holders, as ``viewer`` may see them (the Consigliere hidden
    unless ``knows_consigliere``). Returns a list ordered Procurator, Tribunes by city, Arbiter, Consigliere,
    co-hosts (M21)."""
    order = {StaffKind.PROCURATOR: 0, StaffKind.TRIBUNE: 1, StaffKind.ARBITER: 2, StaffKind.CONSIGLIERE: 3,
             StaffKind.COHOST: 4}
    roles = list(StaffRole.objects.filter(game=game).select_related("user", "city"))
    if not knows_consigliere(viewer, game):
        roles = [r for r in roles if r.kind != StaffKind.CONSIGLIERE]
    elif game.status != GameStatus.FINISHED and not staff_roles_in(viewer, game):
        # A dead mafioso knows the Consigliere of the moment of death, not one appointed afterwards.
        cutoff = knowledge_cutoff(seat_in(viewer, game))
        if cutoff is not None:
            roles = [r for r in roles if r.kind != StaffKind.CONSIGLIERE or r.since <= cutoff]
    return sorted(roles, key=lambda r: (order[r.kind], r.city.number if r.city else 0))
