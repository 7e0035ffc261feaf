"""The night's services (RULES.md L-NIGHT, L-SPIRIT-1, L-DEATH-1): godfathers (L-NIGHT-3), the night's decisions
(L-NIGHT-1/2/4/6), commissar checks and the check channel (L-NIGHT-5, L-INBOX-15), gifts and fish (L-NIGHT-7), the
resolution at night end through the ruleset's pipeline (``roles.night``), the aftermath of a death by day.

What must never leak (L-STAFF-6): the godfather, the decisions and their targets are the city's mafia's and the
Consigliere's; a check's asker is the commissar's. Audit payloads carry ids of rows and counts only."""
from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from cities.i18n import in_game_language
from cities.models import Alignment, City, Game, GameDay, GameStatus, LifeStatus, Resident
from cities.services import check_procurator
from inboxes.membership_services import do_kill_residents
from inboxes.models import DeathCause, Inbox, Membership, MembershipState
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.policies import holds_role, seat_in
from inboxes.services import do_create_inbox, do_post_site_message
from inboxes.viewer_reads import forget_viewer_cache
from kernel.audit import record_event
from kernel.errors import InvalidInput, NotAllowed, WrongState
from kernel.rulesets import ruleset_of
from kernel.timezones import time_for
from roles import night as night_rules
from rulesets.lepra.models import (
    CommissarCheck,
    Gift,
    GiftKind,
    GodfatherElection,
    GodfatherVote,
    NightActionKind,
    NightDecision,
    NightResolution,
)
from rulesets.lepra import seats
from rulesets.lepra.clock.services import night_cutoff
from rulesets.lepra.court.judge_services import (
    ELECTION_NOTICE,
    cities_needing_judge_election,
    do_schedule_judge_election,
)
from rulesets.lepra.game_end_services import do_check_victory
from rulesets.lepra.night import JUDGE
from rulesets.lepra.setup.services import MAX_REASON_LENGTH
from rulesets.lepra.staff_kinds import StaffKind

# ==============================================================================================================
# The night : godfathers (L-NIGHT-3), decisions (L-NIGHT-1/2/4/6), checks (L-NIGHT-5), gifts
# (L-NIGHT-7), resolution, victory (L-WIN)
#
# What must never leak (L-STAFF-6): the godfather, the decisions and their targets are the city's mafia's and the
# Consigliere's; a check's asker is the commissar's (the Consigliere sees the question, never the name). Audit
# payloads carry ids of rows and counts only, never a target, a godfather or an asker.
# ==============================================================================================================



def current_night(game: Game) -> int:
    """The night that follows the current game day: night n follows day n (L-DAY-5)."""
    return game.day_number


def _check_game_running(game: Game) -> None:
    if game.status != GameStatus.RUNNING:
        raise WrongState(_("The game is not running."))


def _is_consigliere(user, game: Game) -> bool:
    return user is not None and holds_role(user, game, StaffKind.CONSIGLIERE)


def _living_mafioso_of(user, city: City) -> Resident | None:
    """``user``'s seat when it is a living mafioso of ``city``, else None (read fresh)."""
    if user is None:
        return None
    forget_viewer_cache(user)
    seat = seat_in(user, city.game_id)
    if seat is None:
        return None
    seat = Resident.objects.get(pk=seat.pk)
    if seat.city_id != city.pk or seat.alignment != Alignment.MAFIA or seat.status != LifeStatus.ALIVE:
        return None
    return seat


def mafia_inbox_of(city: City) -> Inbox | None:
    """The current mafia inbox of ``city`` (L-INBOX-4), or None."""
    return Inbox.objects.filter(city=city, kind=LepraInboxKind.MAFIA, rolled_over_at__isnull=True).order_by("-pk").first()


def _tell_mafia(city: City, fn, now: datetime) -> None:
    """Post the site's message ``fn()`` (built in the game's language) in ``city``'s mafia inbox, if it has one."""
    inbox = mafia_inbox_of(city)
    if inbox is not None and inbox.killed_at is None:
        do_post_site_message(inbox, in_game_language(city.game, fn), acting_user=None, now=now)


def living_godfather(city: City) -> Resident | None:
    """The living godfather of ``city`` or None. Secret: show only to viewers who know him
    (``inboxes.knowledge.knows_seat_role``)."""
    return (Resident.objects.filter(seats.rank_q("is_godfather"), city=city, status=LifeStatus.ALIVE)
            .select_related(seats.SEAT).first())


def _night_resolved(game: Game, night: int) -> bool:
    return NightResolution.objects.filter(game=game, night=night).exists()


def night_window(game: Game, night: int) -> tuple[datetime, datetime] | None:
    """The planned (start, end) of ``night`` of ``game`` (aware UTC) from the clock's phase plan: from the planned
    end of day ``night`` (``GameDay.night_starts_at`` when a deadline holds the night back, else ``ends_at``) to
    ``night_ends_at``. None when the clock has not planned that day (a game run by hand)."""
    day = GameDay.objects.filter(game=game, number=night).only("ends_at", "night_starts_at", "night_ends_at").first()
    if day is None:
        return None
    return (day.night_starts_at or day.ends_at, day.night_ends_at)


def check_night_is_on(game: Game, night: int, now: datetime, viewer=None) -> None:
    """Raise ``WrongState`` unless ``now`` (aware UTC) falls within ``night`` by the planned times
    (``night_window``), however late the clock's handlers run: every night decision (kill, touring, commissar
    check, godfather election and its votes) is made during that night (L-NIGHT-6, L-NIGHT-5, L-NIGHT-3). A game
    without a phase plan for that day is run by hand and is not limited here."""
    window = night_window(game, night)
    if window is None:
        return
    start, end = window
    if now < start:
        local = time_for(start, viewer, game, "d.m H:i")
        raise WrongState(_("Night %(night)d has not started yet: night decisions are made at night, from "
                           "%(start)s.") % {"night": night, "start": local}, rule="L-NIGHT-6")
    if now >= end:
        raise WrongState(_("This night is over."), rule="L-NIGHT-6")


def _has_living_mafia(game: Game) -> dict[int, bool]:
    """{city id: True} for each city that has living mafia as far as anyone may know: a mafioso alive, or dead or
    imprisoned whose alignment is not announced yet (L-DEATH-2). The rotation is public (L-NIGHT-4): skipping a
    city at the death of its last mafioso would tell everyone he was mafia before the daily post (L-STAFF-6)."""
    rows = (Resident.objects.filter(game=game, alignment=Alignment.MAFIA)
            .filter(Q(status=LifeStatus.ALIVE) | Q(alignment_announced=False))
            .values("city_id").annotate(n=Count("id")))
    return {row["city_id"]: row["n"] > 0 for row in rows}


def touring_city_for(game: Game, night: int) -> City | None:
    """The touring city of ``night`` (L-NIGHT-4 [interp]): from night 2, the next city in city order after the
    touring city of the last resolved night (city 1 first), skipping cities without living mafia as far as anyone
    may know (``_has_living_mafia``). None on night 1 or when no city has any. Public: shown on the game page."""
    if night < ruleset_of(game).first_action_night:
        return None
    resolved = NightResolution.objects.filter(game=game, night=night).first()
    if resolved is not None:
        return resolved.touring_city
    cities = list(City.objects.filter(game=game).order_by("number"))
    previous = (NightResolution.objects.filter(game=game, night__lt=night, touring_city__isnull=False)
                .order_by("-night").values_list("touring_city_id", flat=True).first())
    chosen = night_rules.touring_rotation([c.pk for c in cities], _has_living_mafia(game), previous)
    return next((c for c in cities if c.pk == chosen), None)


def touring_rotation_list(game: Game) -> list[tuple[int, City]]:
    """The public touring rotation (L-NIGHT-4) from the current night on: [(night, city)] for as many nights as
    there are cities with living mafia (who tours tonight, then next). Empty before night 2 or with no mafia."""
    night = max(current_night(game), ruleset_of(game).first_action_night)
    first = touring_city_for(game, night)
    if first is None or game.status != GameStatus.RUNNING:
        return []
    cities = list(City.objects.filter(game=game).order_by("number"))
    has_mafia = _has_living_mafia(game)
    result = [(night, first)]
    previous = first.pk
    for offset in range(1, sum(1 for v in has_mafia.values() if v)):
        chosen = night_rules.touring_rotation([c.pk for c in cities], has_mafia, previous)
        result.append((night + offset, next(c for c in cities if c.pk == chosen)))
        previous = chosen
    return result


# --------------------------------------------------------------------------------------------------------------
# Godfathers (L-NIGHT-3)
# --------------------------------------------------------------------------------------------------------------

def open_godfather_election(city: City) -> GodfatherElection | None:
    """The open godfather election of ``city`` or None (secret: the city's mafia and the Consigliere)."""
    return GodfatherElection.objects.filter(city=city, closed_at__isnull=True).first()


@transaction.atomic
def do_open_godfather_election(city: City, *, acting_user, now: datetime | None = None) -> GodfatherElection:
    """Open an election of ``city``'s godfather among its living mafia (L-NIGHT-3): by the Consigliere (night 1, or
    any time), by a living mafioso of the city (the mafia may demand a re-election any night), or by the site
    (``acting_user`` None: the godfather died). The site tells the mafia inbox. Returns the election.
    Raises ``NotAllowed`` (anyone else), ``WrongState`` (game not running, an election already open, no living
    mafia)."""
    now = now or timezone.now()
    city = City.objects.select_related("game").get(pk=city.pk)
    game = Game.objects.select_for_update().get(pk=city.game_id)
    if acting_user is not None and not _is_consigliere(acting_user, game) and _living_mafioso_of(acting_user, city) is None:
        raise NotAllowed(_("Only the Consigliere or the mafia of the city may open a godfather election."),
                         rule="L-NIGHT-3")
    _check_game_running(game)
    if acting_user is not None:  # the site opens one by day when the godfather dies; the votes wait for the night
        check_night_is_on(game, current_night(game), now, acting_user)
    if not Resident.objects.filter(city=city, alignment=Alignment.MAFIA, status=LifeStatus.ALIVE).exists():
        raise WrongState(_("%(city)s has no living mafia.") % {"city": city.name}, rule="L-NIGHT-3")
    if open_godfather_election(city) is not None:
        raise WrongState(_("A godfather election is already open in %(city)s.") % {"city": city.name},
                         rule="L-NIGHT-3")
    election = GodfatherElection.objects.create(game=game, city=city, night=current_night(game), opened_at=now)
    _tell_mafia(city, lambda: _("The election of the godfather is open: vote on the night page."), now)
    record_event(game, "godfather.election_opened", actor=acting_user, at=now,
                 payload={"election": election.pk, "city": city.pk})
    return election


@transaction.atomic
def do_vote_godfather(election: GodfatherElection, candidate: Resident, *, acting_user,
                      now: datetime | None = None) -> GodfatherVote:
    """A living mafioso of the election's city votes for ``candidate``, a living mafioso of the same city
    (L-NIGHT-3: a simple vote); a second vote replaces the first while the election is open.
    Raises ``NotAllowed`` (not a living mafioso there), ``InvalidInput`` (bad candidate), ``WrongState`` (closed)."""
    now = now or timezone.now()
    election = GodfatherElection.objects.select_for_update(of=("self",)).select_related("city", "game").get(
        pk=election.pk)
    voter = _living_mafioso_of(acting_user, election.city)
    if voter is None:
        raise NotAllowed(_("Only the living mafia of the city vote for their godfather."), rule="L-NIGHT-3")
    if election.closed_at is not None:
        raise WrongState(_("This election is closed."), rule="L-NIGHT-3")
    check_night_is_on(election.game, current_night(election.game), now, acting_user)
    candidate = Resident.objects.get(pk=candidate.pk)
    if (candidate.city_id != election.city_id or candidate.alignment != Alignment.MAFIA
            or candidate.status != LifeStatus.ALIVE):
        raise InvalidInput(_("The godfather is elected among the living mafia of the city."), rule="L-NIGHT-3")
    vote, _created = GodfatherVote.objects.update_or_create(
        election=election, voter=voter, defaults={"candidate": candidate, "at": now})
    record_event(election.game, "godfather.voted", actor=acting_user, at=now, payload={"election": election.pk})
    return vote


def _make_godfather(city: City, resident: Resident, now: datetime) -> None:
    """``resident`` becomes the godfather of ``city``; a living predecessor steps down first (one living
    godfather per city, a DB constraint)."""
    for old in (Resident.objects.select_for_update(of=("self",)).select_related(seats.SEAT)
                .filter(seats.rank_q("is_godfather"), city=city, status=LifeStatus.ALIVE)):
        if old.pk != resident.pk:
            seats.do_set_seat_flags(old, is_godfather=False, acting_user=None, now=now)
    if not seats.is_godfather(resident) or resident.status != LifeStatus.ALIVE:
        seats.do_set_seat_flags(resident, is_godfather=True, acting_user=None, now=now)
    forget_viewer_cache(resident.user)


@transaction.atomic
def do_close_godfather_election(election: GodfatherElection, *, acting_user, now: datetime | None = None,
                                cutoff: datetime | None = None) -> Resident | None:
    """Close the election (the Consigliere, or the site at night end): the living candidate with the most votes
    becomes the godfather (L-NIGHT-3). A tie or no vote fails the election: the Consigliere then appoints one
    (``do_appoint_godfather``). Returns the new godfather or None. Raises ``NotAllowed`` or ``WrongState``."""
    now = now or timezone.now()
    election = GodfatherElection.objects.select_for_update(of=("self",)).select_related("city", "game").get(
        pk=election.pk)
    if acting_user is not None and not _is_consigliere(acting_user, election.game):
        raise NotAllowed(_("Only the Consigliere closes a godfather election."), rule="L-NIGHT-3")
    if election.closed_at is not None:
        raise WrongState(_("This election is closed."), rule="L-NIGHT-3")
    if acting_user is not None:
        check_night_is_on(election.game, current_night(election.game), now, acting_user)
    counts: dict[int, int] = {}
    votes = GodfatherVote.objects.filter(election=election)
    if cutoff is not None:  # the night's planned end: a vote after it does not count (L-NIGHT-6)
        votes = votes.filter(at__lt=cutoff)
    for vote in votes.select_related("candidate", "voter"):
        if vote.candidate.status == LifeStatus.ALIVE and vote.voter.status == LifeStatus.ALIVE:
            counts[vote.candidate_id] = counts.get(vote.candidate_id, 0) + 1
    best = max(counts.values(), default=0)
    leaders = [rid for rid, n in counts.items() if n == best]
    winner = Resident.objects.get(pk=leaders[0]) if best > 0 and len(leaders) == 1 else None
    election.closed_at, election.winner = now, winner
    election.save(update_fields=["closed_at", "winner"])
    if winner is not None:
        _make_godfather(election.city, winner, now)
        _tell_mafia(election.city, lambda: _("%(name)s is the godfather.") % {"name": winner.name}, now)
    else:
        _tell_mafia(election.city, lambda: _("The election of the godfather failed: the Consigliere appoints one."),
                    now)
    record_event(election.game, "godfather.election_closed", actor=acting_user, at=now,
                 payload={"election": election.pk, "decided": winner is not None})
    return winner


@transaction.atomic
def do_appoint_godfather(city: City, resident: Resident, *, acting_user, now: datetime | None = None) -> Resident:
    """The Consigliere appoints ``resident``, a living mafioso of ``city``, its godfather (L-NIGHT-3); an open
    election there is closed with this result. Raises ``NotAllowed`` (not the Consigliere), ``InvalidInput`` (not
    a living mafioso of the city) or ``WrongState`` (game not running)."""
    now = now or timezone.now()
    city = City.objects.select_related("game").get(pk=city.pk)
    game = city.game
    if not _is_consigliere(acting_user, game):
        raise NotAllowed(_("Only the Consigliere appoints a godfather."), rule="L-NIGHT-3")
    _check_game_running(game)
    resident = Resident.objects.select_for_update(of=("self",)).get(pk=resident.pk)
    if resident.city_id != city.pk or resident.alignment != Alignment.MAFIA or resident.status != LifeStatus.ALIVE:
        raise InvalidInput(_("The godfather is one of the living mafia of the city."), rule="L-NIGHT-3")
    election = GodfatherElection.objects.select_for_update().filter(city=city, closed_at__isnull=True).first()
    if election is not None:
        election.closed_at, election.winner = now, resident
        election.save(update_fields=["closed_at", "winner"])
    _make_godfather(city, resident, now)
    _tell_mafia(city, lambda: _("The Consigliere appointed %(name)s the godfather.") % {"name": resident.name}, now)
    record_event(game, "godfather.appointed", actor=acting_user, at=now, payload={"city": city.pk})
    return resident


# --------------------------------------------------------------------------------------------------------------
# The night's decision (L-NIGHT-1/2/4/6)
# --------------------------------------------------------------------------------------------------------------

def last_decision(city: City, night: int, kind: str) -> NightDecision | None:
    """The decision that counts for ``city`` on ``night`` of ``kind`` (the last, L-NIGHT-6), or None. Secret."""
    return NightDecision.objects.filter(city=city, night=night, kind=kind).select_related("target").order_by(
        "-at", "-id").first()


@transaction.atomic
def do_submit_night_decision(city: City, target: Resident | None, *, acting_user, kind: str = NightActionKind.KILL,
                             now: datetime | None = None) -> NightDecision:
    """The night's decision of ``city``'s mafia for the current night (L-NIGHT-1/2/4/6): ``kind`` "kill" (one
    living honest resident of the city; the mafia cannot target their own) or "tour" (only the touring city, one
    living resident of another city but never its sitting judge, L-NIGHT-4, L-JUDGE-7); ``target`` None means
    "no kill". Entered by the city's living godfather, or by the Consigliere while the godfather is silent
    (no decision of that kind yet this night, or no living godfather, L-NIGHT-2). Changeable until the night is
    resolved: every submission is kept, the last counts. Returns the NightDecision. Raises ``NotAllowed``,
    ``InvalidInput`` (bad target) or ``WrongState`` (night 1, L-DAY-5; night resolved; game not running)."""
    now = now or timezone.now()
    city = City.objects.select_related("game").get(pk=city.pk)
    game = Game.objects.select_for_update().get(pk=city.game_id)
    night = current_night(game)
    godfather = living_godfather(city)
    seat = _living_mafioso_of(acting_user, city)
    by_consigliere = False
    if seat is not None and godfather is not None and seat.pk == godfather.pk:
        pass
    elif _is_consigliere(acting_user, game):
        by_consigliere = True
    else:
        raise NotAllowed(_("Only the godfather decides the night (or the Consigliere when he is silent)."),
                         rule="L-NIGHT-2")
    _check_game_running(game)
    if kind not in NightActionKind.values:
        raise InvalidInput(_("Unknown night action."), rule="L-NIGHT-1")
    if night < ruleset_of(game).first_action_night:
        raise WrongState(_("On night 1 the mafia elect their godfather and kill nobody."), rule="L-DAY-5")
    if _night_resolved(game, night):
        raise WrongState(_("This night is over."), rule="L-NIGHT-6")
    check_night_is_on(game, night, now, acting_user)
    if by_consigliere and godfather is not None and NightDecision.objects.filter(
            city=city, night=night, kind=kind, by_consigliere=False).exists():
        raise NotAllowed(_("The godfather has decided: his decision is final."), rule="L-NIGHT-2")
    if kind == NightActionKind.TOUR:
        touring = touring_city_for(game, night)
        if touring is None or touring.pk != city.pk:
            raise WrongState(_("%(city)s is not the touring city tonight.") % {"city": city.name}, rule="L-NIGHT-4")
    if target is not None:
        target = Resident.objects.select_related(seats.SEAT).get(pk=target.pk)
        if target.game_id != game.pk or target.status != LifeStatus.ALIVE:
            raise InvalidInput(_("The target must be a living resident."), rule="L-NIGHT-1")
        if kind == NightActionKind.KILL:
            if target.city_id != city.pk:
                raise InvalidInput(_("The mafia kill a resident of their own city."), rule="L-NIGHT-1")
            if target.alignment != Alignment.HONEST:
                raise InvalidInput(_("The mafia kill an honest resident, not one of their own."), rule="L-NIGHT-1")
        else:
            if target.city_id == city.pk:
                raise InvalidInput(_("Touring mafia kill a resident of another city."), rule="L-NIGHT-4")
            if seats.is_judge(target):
                raise InvalidInput(_("Touring mafia cannot kill the judge of another city."), rule="L-JUDGE-7")
    decision = NightDecision.objects.create(game=game, city=city, night=night, kind=kind, target=target,
                                            by_consigliere=by_consigliere, at=now)

    def text():
        what = (_("touring: %(name)s") if kind == NightActionKind.TOUR else _("kill: %(name)s")) % {
            "name": target.name} if target is not None else (_("touring: no kill") if kind == NightActionKind.TOUR
                                                              else _("no kill"))
        who = _("the Consigliere") if by_consigliere else _("the godfather")
        return _("Decision for night %(night)d, entered by %(who)s: %(what)s.") % {"night": night, "who": who,
                                                                                  "what": what}
    _tell_mafia(city, text, now)
    record_event(game, "night.decision", actor=acting_user, at=now,
                 payload={"decision": decision.pk, "city": city.pk, "night": night, "kind": kind})
    return decision


# --------------------------------------------------------------------------------------------------------------
# Commissar checks (L-NIGHT-5) and the check channel (L-INBOX-15)
# --------------------------------------------------------------------------------------------------------------

def check_channel_of(city: City) -> Inbox | None:
    """The check channel of ``city``'s commissar (L-INBOX-15), or None."""
    return Inbox.objects.filter(city=city, kind=LepraInboxKind.CHECK).order_by("pk").first()


def _ensure_check_channel(city: City, commissar: Resident, now: datetime) -> Inbox:
    """The check channel of ``city``, created by the site when missing. The commissar reads it but never posts
    (a banned member, L-INBOX-17): questions go through ``do_check_resident`` and appear as the site's messages,
    so the Consigliere never sees the asker's name (L-NIGHT-5); the Consigliere reads it by role."""
    inbox = check_channel_of(city)
    if inbox is None:
        title = in_game_language(city.game, lambda: _("Check channel: %(city)s") % {"city": city.name})
        inbox = do_create_inbox(city.game, LepraInboxKind.CHECK, title=title, city=city, banned=[commissar],
                                acting_user=None, now=now)
    elif not Membership.objects.filter(inbox=inbox, resident=commissar).exists():
        Membership.objects.create(inbox=inbox, resident=commissar, state=MembershipState.BANNED, since=now)
    forget_viewer_cache(commissar.user)
    return inbox


@transaction.atomic
def do_check_resident(target: Resident, *, acting_user, now: datetime | None = None) -> CommissarCheck:
    """The commissar asks whether ``target``, a living resident of their own city (not themself), is mafia
    (L-NIGHT-5): from night 2, once per night; answered at once and truthfully by the site in the check channel
    (the question and the answer are the site's messages: no name of the asker). Returns the CommissarCheck
    (``is_mafia``). Raises ``NotAllowed`` (not a living commissar), ``InvalidInput`` (bad target, asked already
    tonight) or ``WrongState`` (night 1, L-DAY-5; night resolved; game not running)."""
    now = now or timezone.now()
    if acting_user is None:
        raise NotAllowed(_("Only a commissar checks."), rule="L-NIGHT-5")
    forget_viewer_cache(acting_user)
    seat = seat_in(acting_user, target.game_id)
    if seat is not None:
        seat = (Resident.objects.select_for_update(of=("self",)).select_related("city", "game", seats.SEAT)
                .get(pk=seat.pk))
    if seat is None or not seats.is_commissar(seat) or seat.status != LifeStatus.ALIVE:
        raise NotAllowed(_("Only a living commissar checks."), rule="L-NIGHT-5")
    game, city = seat.game, seat.city
    _check_game_running(game)
    night = current_night(game)
    if night < ruleset_of(game).first_action_night:
        raise WrongState(_("Commissars check nobody on night 1."), rule="L-DAY-5")
    if _night_resolved(game, night):
        raise WrongState(_("This night is over."), rule="L-NIGHT-6")
    check_night_is_on(game, night, now, acting_user)  # the answer comes at night, not during the day before the vote
    target = Resident.objects.get(pk=target.pk)
    if target.city_id != city.pk or target.status != LifeStatus.ALIVE or target.pk == seat.pk:
        raise InvalidInput(_("A commissar checks a living resident of their own city."), rule="L-NIGHT-5")
    if CommissarCheck.objects.filter(city=city, night=night).exists():
        raise InvalidInput(_("You have already checked someone tonight."), rule="L-NIGHT-5")
    is_mafia = target.alignment == Alignment.MAFIA
    check = CommissarCheck.objects.create(game=game, city=city, night=night, commissar=seat, target=target,
                                          is_mafia=is_mafia, at=now)
    channel = _ensure_check_channel(city, seat, now)
    question = in_game_language(game, lambda: _("Night %(night)d. Question from the commissar: is %(name)s mafia?")
                                 % {"night": night, "name": target.name})
    answer = in_game_language(game, lambda: (_("Answer: %(name)s is mafia.") if is_mafia
                                              else _("Answer: %(name)s is not mafia.")) % {"name": target.name})
    do_post_site_message(channel, question, acting_user=None, now=now)
    do_post_site_message(channel, answer, acting_user=None, now=now)
    record_event(game, "commissar.checked", actor=acting_user, at=now, payload={"check": check.pk, "night": night})
    return check


# --------------------------------------------------------------------------------------------------------------
# Gifts and fish (L-NIGHT-7)
# --------------------------------------------------------------------------------------------------------------

def toured_cities(game: Game) -> list[City]:
    """Cities whose mafia have toured (resolved nights), in city order: the possible receivers of gifts."""
    ids = set(NightResolution.objects.filter(game=game, touring_city__isnull=False).values_list("touring_city_id",
                                                                                                 flat=True))
    return list(City.objects.filter(pk__in=ids).order_by("number"))


@transaction.atomic
def do_send_gift(from_city: City, to_city: City, kind: str, text: str = "", *, acting_user,
                 now: datetime | None = None) -> Gift:
    """The Consigliere delivers a gift (or a fish) from ``from_city``'s mafia to ``to_city``'s godfather, whose
    mafia toured (L-NIGHT-7): a site message in ``to_city``'s mafia inbox naming the sending city only (anonymous
    by city). ``text`` at most 2000 characters. Returns the Gift. Raises ``NotAllowed`` (not the Consigliere),
    ``InvalidInput`` (same city, unknown kind, text too long, a city that has not toured) or ``WrongState``."""
    now = now or timezone.now()
    from_city = City.objects.select_related("game").get(pk=from_city.pk)
    game = from_city.game
    if not _is_consigliere(acting_user, game):
        raise NotAllowed(_("Gifts and fish go through the Consigliere."), rule="L-NIGHT-7")
    _check_game_running(game)
    text = (text or "").strip()
    if kind not in GiftKind.values:
        raise InvalidInput(_("A gift or a fish."), rule="L-NIGHT-7")
    if to_city.game_id != game.pk or to_city.pk == from_city.pk:
        raise InvalidInput(_("A gift goes to another city's godfather."), rule="L-NIGHT-7")
    if len(text) > MAX_REASON_LENGTH:
        raise InvalidInput(_("The text is too long: %(length)d characters, at most %(max)d.")
                           % {"length": len(text), "max": MAX_REASON_LENGTH})
    if to_city.pk not in {c.pk for c in toured_cities(game)}:
        raise InvalidInput(_("%(city)s has not toured yet.") % {"city": to_city.name}, rule="L-NIGHT-7")
    gift = Gift.objects.create(game=game, from_city=from_city, to_city=to_city, night=current_night(game), kind=kind,
                               text=text, at=now)

    def message():
        base = (_("A gift from the mafia of %(city)s.") if kind == GiftKind.GIFT
                else _("A fish from the mafia of %(city)s.")) % {"city": from_city.name}
        return f"{base}\n\n{text}" if text else base
    _tell_mafia(to_city, message, now)
    record_event(game, "night.gift", actor=acting_user, at=now, payload={"gift": gift.pk, "kind": kind})
    return gift


# --------------------------------------------------------------------------------------------------------------
# Resolution at night end (L-NIGHT-6, L-SPIRIT-1, L-DEATH-1)
# --------------------------------------------------------------------------------------------------------------

def night_state_of(game: Game, night: int) -> night_rules.NightState:
    """The pure pipeline's view of ``game`` now, for ``night`` (residents, city order, touring city)."""
    cities = list(City.objects.filter(game=game).order_by("number"))
    touring = touring_city_for(game, night)
    residents = tuple(
        night_rules.ResidentState(id=r.pk, city=r.city_id, alignment=r.alignment, alive=r.status == LifeStatus.ALIVE,
                                  ranks=_ranks(r))
        for r in Resident.objects.filter(game=game).select_related(seats.SEAT).order_by("pk"))
    return night_rules.NightState(night=night, residents=residents, city_order=tuple(c.pk for c in cities),
                                  touring_city=touring.pk if touring else None)


def _ranks(resident: Resident) -> frozenset[str]:
    """The ranks of ``resident`` the night steps read (``ResidentState.ranks``): "judge" for a sitting judge."""
    return frozenset({JUDGE}) if seats.is_sitting_judge(resident) else frozenset()


def night_actions_of(game: Game, night: int, *, cutoff: datetime | None = None) -> list[night_rules.NightAction]:
    """The submitted actions of ``night`` as pipeline input, in submission order (``seq``); with ``cutoff``
    (aware UTC, the planned end of the night) only those submitted before it (L-NIGHT-6)."""
    rows = []
    decisions = NightDecision.objects.filter(game=game, night=night)
    checks = CommissarCheck.objects.filter(game=game, night=night)
    if cutoff is not None:
        decisions, checks = decisions.filter(at__lt=cutoff), checks.filter(at__lt=cutoff)
    for d in decisions:
        kind = night_rules.TOUR if d.kind == NightActionKind.TOUR else night_rules.KILL
        rows.append((d.at, 0, d.pk, night_rules.NightAction(kind=kind, city=d.city_id, target=d.target_id, seq=0)))
    for c in checks:
        rows.append((c.at, 1, c.pk, night_rules.NightAction(kind=night_rules.CHECK, city=c.city_id, target=c.target_id,
                                                            seq=0)))
    rows.sort(key=lambda row: row[:3])
    return [night_rules.NightAction(kind=a.kind, city=a.city, target=a.target, seq=i)
            for i, (_at, _k, _pk, a) in enumerate(rows, start=1)]


@transaction.atomic
def do_resolve_night(game: Game, *, night: int, acting_user=None, now: datetime | None = None
                     ) -> night_rules.NightOutcome:
    """Resolve ``night`` of ``game`` once (L-NIGHT-6), in one transaction: run ``roles.night.resolve_night`` with
    the night steps of the game's ruleset (``ruleset_of(game).night_steps``) over the stored decisions and
    checks; kill the victims at once with ``inboxes.membership_services.do_kill_residents`` (cause killed; the spirit rule's
    victims as spirits, L-SPIRIT-1: not in the cemetery, a vote today); close open godfather elections, and open a new one where a godfather died
    (L-NIGHT-3); record ``night.resolved`` {night, deaths: [{resident, city, cause, touring, by_city, spirit}],
    checks: count, touring_city}; then ``do_check_victory``.

    Idempotent: a ``NightResolution`` row per (game, night); a second call changes nothing and returns the stored
    outcome. By the scheduler (``acting_user`` None, the ``night_end`` event) or the Procurator. Returns the
    ``NightOutcome``. Raises ``NotAllowed`` or ``WrongState`` (game not running and the night not resolved)."""
    now = now or timezone.now()
    check_procurator(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    stored = NightResolution.objects.filter(game=game, night=night).first()
    if stored is not None:
        return night_rules.NightOutcome.from_dict(stored.outcome)
    _check_game_running(game)
    state = ruleset_of(game).night_state(game, night)  # the ruleset builds what its steps read
    cutoff = night_cutoff(game, night)  # the planned end: what came later never counts, however late this runs
    outcome = night_rules.resolve_night(state, night_actions_of(game, night, cutoff=cutoff),
                                        ruleset_of(game).night_steps)
    NightResolution.objects.create(game=game, night=night, resolved_at=now, touring_city_id=outcome.touring_city,
                                   outcome=outcome.as_dict())
    residents = {r.pk: r for r in Resident.objects.filter(pk__in=[d.resident for d in outcome.deaths])
                 .select_related(seats.SEAT)}
    dead_godfather_cities = set()
    spirits_by_city: dict[int, list[int]] = {}
    do_kill_residents([(residents[d.resident], d.spirit) for d in outcome.deaths], DeathCause.KILLED,
                      acting_user=None, now=now)
    for death in outcome.deaths:
        victim = residents[death.resident]
        if death.spirit:
            spirits_by_city.setdefault(death.city, []).append(death.resident)
        if seats.is_godfather(victim):
            dead_godfather_cities.add(victim.city_id)
    for city_id, spirits in spirits_by_city.items():
        record_event(game, "voting.spirits", actor=None, at=now, payload={"city": city_id, "spirits": spirits})
    # Godfathers (L-NIGHT-3): the night's elections close at night end; a dead godfather's city elects anew.
    for election in GodfatherElection.objects.filter(game=game, closed_at__isnull=True):
        do_close_godfather_election(election, acting_user=None, now=now, cutoff=cutoff)
    for city in City.objects.filter(pk__in=dead_godfather_cities):
        if living_godfather(city) is None and Resident.objects.filter(
                city=city, alignment=Alignment.MAFIA, status=LifeStatus.ALIVE).exists():
            do_open_godfather_election(city, acting_user=None, now=now)
    record_event(game, "night.resolved", actor=acting_user, at=now, payload={
        "night": night,
        "deaths": [{"resident": d.resident, "city": d.city, "cause": d.cause, "touring": d.touring,
                    "by_city": d.by_city, "spirit": d.spirit} for d in outcome.deaths],
        "checks": outcome.checks,
        "touring_city": outcome.touring_city,
    })
    if do_check_victory(game, acting_user=None, now=now) is None:
        _schedule_judge_elections_where_needed(game, now)
    return outcome


#: The election the site schedules when a judge dies (L-JUDGE-2): it opens at the earliest notice L-DAY-4 allows
#: (6 h), rounded up to the next full hour, and lasts this long. The Arbiter may move it before it opens
#: (``rulesets.lepra.court.judge_services.do_schedule_judge_election`` moves a pending election and announces it again).
SITE_ELECTION_LENGTH = timedelta(hours=6)


def _schedule_judge_elections_where_needed(game: Game, now: datetime) -> list:
    """Schedule a judge election in every city of ``game`` that needs one (a judge died, L-JUDGE-2, L-DEATH-1),
    by the site. Returns the scheduled ``JudgeElection`` rows. Called inside the resolution's transaction."""
    if game.day_number < 1:
        return []
    opens_at = (now + ELECTION_NOTICE).replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    return [do_schedule_judge_election(city, opens_at, opens_at + SITE_ELECTION_LENGTH, acting_user=None, now=now)
            for city in cities_needing_judge_election(game)]


@transaction.atomic
def do_after_day_death(game: Game, *, acting_user=None, now: datetime | None = None) -> str | None:
    """After a death by day (an execution, a confirmed suicide, a penalty): open a godfather election where the
    godfather died and mafia live on (L-NIGHT-3), then check victory (L-WIN-1). By the site. Returns the winner
    or None (see ``do_check_victory``)."""
    now = now or timezone.now()
    game = Game.objects.get(pk=game.pk)
    if game.status != GameStatus.RUNNING:
        return None
    for city in City.objects.filter(game=game):
        if (living_godfather(city) is None and open_godfather_election(city) is None
                and Resident.objects.filter(seats.rank_q("is_godfather"), city=city).exclude(
                    status=LifeStatus.ALIVE).exists()
                and Resident.objects.filter(city=city, alignment=Alignment.MAFIA, status=LifeStatus.ALIVE).exists()):
            do_open_godfather_election(city, acting_user=None, now=now)
    winner = do_check_victory(game, acting_user=acting_user, now=now)
    if winner is None:
        _schedule_judge_elections_where_needed(game, now)
    return winner
