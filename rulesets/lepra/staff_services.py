"""Lepra's staff services: replacing a Tribune, the impeachment of a Tribune (L-IMPEACH-1, L-IMPEACH-2) and the
mafia's acknowledgement of their role, confirmed by the Consigliere to the Procurator in the bar (L-ASSIGN-4).

Every ``do_`` function is one transaction that checks the rules, writes its ``GameEvent`` audit row and raises a
``kernel.errors.RuleViolation`` subclass with a readable message. The console (``rulesets.lepra.console.staff_tools``)
and the players' pages (``rulesets.lepra.staff_views``) call these and nothing else.
"""
from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from cities.models import HOST_STAFF_KIND, Alignment, City, Game, GameEvent, GameStatus, LifeStatus, Resident, StaffRole
from cities.staff_kinds import staff_kinds_of
from inboxes import policies, viewer_reads
from inboxes.models import Inbox, Message
from inboxes.services import do_create_inbox, do_post_site_message, kind_for
from kernel.audit import record_event
from kernel.errors import InvalidInput, NotAllowed, WrongState
from kernel.rulesets import ruleset_of

from .models import ImpeachmentDemand, ImpeachmentRuling, ImpeachmentSignature, RoleAcknowledgement

#: The share of a city's living residents whose signatures bring a demand to the Procurator (L-IMPEACH-1).
IMPEACHMENT_SHARE = (3, 10)


def _check_running(game: Game) -> None:
    if game.status != GameStatus.RUNNING:
        raise WrongState(_("The game is not running."))


def _check_procurator(game: Game, acting_user) -> None:
    """Raise ``NotAllowed`` unless ``acting_user`` is the Procurator of ``game`` (L-IMPEACH-2: he rules)."""
    if acting_user is None or not policies.holds_role(acting_user, game, HOST_STAFF_KIND):
        raise NotAllowed(_("Only the Procurator of this game may do this."), rule="L-IMPEACH-2")


def open_impeachment_demand_of(seat: Resident) -> ImpeachmentDemand | None:
    """The impeachment demand of ``seat``'s city not yet ruled on (at most one), or None. For a page
    of that city's residents (the caller checked the seat)."""
    return ImpeachmentDemand.objects.filter(city_id=seat.city_id, ruled_at__isnull=True).first()


def has_acknowledged_role(seat: Resident) -> bool:
    """True when ``seat`` (a mafioso; the caller checked) has acknowledged their role."""
    return RoleAcknowledgement.objects.filter(resident=seat).exists()


# --------------------------------------------------------------------------------------------------------------
# Replacing a Tribune
# --------------------------------------------------------------------------------------------------------------

def _replace_tribune(role: StaffRole, new_user, *, acting_user, now: datetime) -> StaffRole:
    role = StaffRole.objects.select_for_update(of=("self",)).select_related("game", "city", "user").get(pk=role.pk)
    game = role.game
    if role.kind not in staff_kinds_of(game, "city_staff_kinds"):
        raise InvalidInput(_("Only a Tribune is replaced this way."), rule="L-IMPEACH-2")
    if new_user is None or not new_user.is_active:
        raise InvalidInput(_("Choose an active account for the new Tribune."), rule="L-IMPEACH-2")
    if Resident.objects.filter(game=game, user=new_user).exists():
        raise NotAllowed(_("Residents of a game cannot be its staff."), rule="L-STAFF-1")
    held = StaffRole.objects.filter(game=game, user=new_user).first()
    if held is not None:
        raise NotAllowed(_("%(name)s already holds a staff role in this game: %(role)s.")
                         % {"name": new_user.public_name, "role": held.get_kind_display()},
                         rule="L-STAFF-5")
    old_user = role.user
    role.user = new_user
    role.save(update_fields=["user"])
    viewer_reads.forget_viewer_cache(old_user)
    viewer_reads.forget_viewer_cache(new_user)
    record_event(game, "staff.tribune_replaced", actor=acting_user, at=now,
                 payload={"role": role.pk, "city": role.city_id, "old_user": old_user.pk, "new_user": new_user.pk})
    return role


@transaction.atomic
def do_replace_tribune(role: StaffRole, new_user, *, acting_user, now: datetime | None = None) -> StaffRole:
    """``new_user`` becomes the Tribune of ``role``'s city in place of its holder.

    Every power moves at once because the access policy derives them from the ``StaffRole`` row: the city's
    inboxes it organises, its grants, its stand-in periods, its place in the office. The replaced account keeps
    nothing. Posts keep the name of who wrote them. Procurator only.
    Raises ``NotAllowed`` (not the Procurator; ``new_user`` plays or holds a role in the game), ``InvalidInput``
    (not a Tribune role; inactive account), ``WrongState`` (game over).
    """
    now = now or timezone.now()
    _check_procurator(role.game, acting_user)
    if role.game.status == GameStatus.FINISHED:
        raise WrongState(_("The game is over."))
    return _replace_tribune(role, new_user, acting_user=acting_user, now=now)


# --------------------------------------------------------------------------------------------------------------
# Impeachment
# --------------------------------------------------------------------------------------------------------------

def impeachment_threshold_met(signers: int, living: int) -> bool:
    """True when ``signers`` living residents are at least 30% of the ``living`` residents of a city; exact integer
    arithmetic (6 of 20 is enough, 29 of 100 is not). False for a city with nobody living."""
    num, den = IMPEACHMENT_SHARE
    return living > 0 and signers * den >= living * num


def living_signatures(demand: ImpeachmentDemand) -> tuple[int, int]:
    """(living signers, living residents of the city) of ``demand``, counted now."""
    living = Resident.objects.filter(city_id=demand.city_id, status=LifeStatus.ALIVE).count()
    signers = demand.signatures.filter(resident__status=LifeStatus.ALIVE).count()
    return signers, living


def _living_seat(game: Game, acting_user) -> Resident:
    seat = policies.seat_in(acting_user, game) if acting_user is not None else None
    if seat is None or not seat.is_living:
        raise NotAllowed(_("Only living residents of the city may demand an impeachment."),
                         rule="L-IMPEACH-1")
    return seat


def _sign(demand: ImpeachmentDemand, seat: Resident, *, acting_user, now: datetime) -> ImpeachmentSignature:
    signature = ImpeachmentSignature.objects.create(demand=demand, resident=seat, at=now)
    record_event(demand.game, "impeachment.signed", actor=acting_user, at=now,
                 payload={"demand": demand.pk, "city": demand.city_id, "resident": seat.pk})
    if demand.reached_at is None:
        signers, living = living_signatures(demand)
        if impeachment_threshold_met(signers, living):
            demand.reached_at = now
            demand.save(update_fields=["reached_at"])
            record_event(demand.game, "impeachment.reached", actor=None, at=now,
                         payload={"demand": demand.pk, "city": demand.city_id, "signers": signers,
                                  "living": living})
    return signature


@transaction.atomic
def do_demand_impeachment(game: Game, *, acting_user, now: datetime | None = None) -> ImpeachmentDemand:
    """A living resident starts a demand to impeach the Tribune of their city, and signs it.

    Returns the ImpeachmentDemand (``reached_at`` set if this signature alone reaches 30%). Raises ``NotAllowed``
    (not a living resident), ``WrongState`` (game not running; the city has no Tribune; an undecided demand
    exists: sign that one).
    """
    now = now or timezone.now()
    _check_running(game)
    viewer_reads.forget_viewer_cache(acting_user)
    seat = _living_seat(game, acting_user)
    tribune = StaffRole.objects.filter(game=game, kind__in=staff_kinds_of(game, "city_staff_kinds"),
                                       city_id=seat.city_id).first()
    if tribune is None:
        raise WrongState(_("This city has no Tribune."), rule="L-IMPEACH-1")
    if ImpeachmentDemand.objects.select_for_update().filter(city_id=seat.city_id, ruled_at__isnull=True).exists():
        raise WrongState(_("A demand to impeach the Tribune of this city is already open: sign it."),
                         rule="L-IMPEACH-1")
    demand = ImpeachmentDemand.objects.create(game=game, city_id=seat.city_id, tribune=tribune,
                                              tribune_user_id=tribune.user_id, initiator=seat, created_at=now)
    record_event(game, "impeachment.demanded", actor=acting_user, at=now,
                 payload={"demand": demand.pk, "city": seat.city_id, "resident": seat.pk})
    _sign(demand, seat, acting_user=acting_user, now=now)
    return demand


@transaction.atomic
def do_sign_impeachment_demand(demand: ImpeachmentDemand, *, acting_user,
                               now: datetime | None = None) -> ImpeachmentSignature:
    """A living resident of the demand's city signs it. When the living signers reach 30% of the
    city's living residents, the demand goes before the Procurator (``reached_at``, an ``impeachment.reached``
    audit row; his dashboard lists it). Raises ``NotAllowed`` (not a living resident of that city), ``WrongState``
    (game not running, demand decided, already signed)."""
    now = now or timezone.now()
    demand = ImpeachmentDemand.objects.select_for_update(of=("self",)).select_related("game").get(pk=demand.pk)
    _check_running(demand.game)
    viewer_reads.forget_viewer_cache(acting_user)
    seat = _living_seat(demand.game, acting_user)
    if seat.city_id != demand.city_id:
        raise NotAllowed(_("Only living residents of the city may demand an impeachment."),
                         rule="L-IMPEACH-1")
    if demand.ruled_at is not None:
        raise WrongState(_("The Procurator has already ruled on this demand."),
                         rule="L-IMPEACH-2")
    if demand.signatures.filter(resident=seat).exists():
        raise WrongState(_("You have already signed this demand."), rule="L-IMPEACH-1")
    return _sign(demand, seat, acting_user=acting_user, now=now)


@transaction.atomic
def do_open_impeachment_inbox(demand: ImpeachmentDemand, *, acting_user, now: datetime | None = None) -> Inbox:
    """The Procurator opens the impeachment inbox of a demand that reached 30%: every
    resident of the city is in it, all but the initiators (the living signers) banned; the Procurator organises
    it; the city's Tribune reads and posts there (to be heard, ``STAFF_GRANTS``).

    Returns the Inbox. Raises ``NotAllowed`` (not the Procurator), ``WrongState`` (game not running, threshold not
    reached, already opened).
    """
    now = now or timezone.now()
    demand = ImpeachmentDemand.objects.select_for_update(of=("self",)).select_related("game", "city").get(pk=demand.pk)
    game = demand.game
    _check_procurator(game, acting_user)
    _check_running(game)
    if demand.reached_at is None:
        raise WrongState(_("The demand has not reached 30 percent of the living residents."),
                         rule="L-IMPEACH-1")
    if demand.inbox_id is not None:
        raise WrongState(_("The impeachment inbox is already open."), rule="L-IMPEACH-2")

    signers = set(demand.signatures.filter(resident__status=LifeStatus.ALIVE).values_list("resident_id", flat=True))
    residents = list(Resident.objects.filter(city_id=demand.city_id).order_by("name", "id"))
    procurator = StaffRole.objects.get(game=game, kind=HOST_STAFF_KIND)
    with translation.override(game.language):  # a stored title: in the game's language, whoever asks
        title = _("Impeachment of the Tribune of %(city)s") % {"city": demand.city.name}
    inbox = do_create_inbox(game, kind_for(game, "impeachment"), acting_user=None, city=demand.city, organizer=procurator,
                            title=title,
                            members=[r for r in residents if r.pk in signers],
                            banned=[r for r in residents if r.pk not in signers], now=now)
    demand.inbox = inbox
    demand.opened_at = now
    demand.save(update_fields=["inbox", "opened_at"])
    record_event(game, "impeachment.opened", actor=acting_user, at=now,
                 payload={"demand": demand.pk, "city": demand.city_id, "inbox": inbox.pk,
                          "members": len(signers), "banned": len(residents) - len(signers)})
    return inbox


@transaction.atomic
def do_rule_on_impeachment(demand: ImpeachmentDemand, ruling: str, *, acting_user, reason: str = "",
                           new_tribune_user=None, now: datetime | None = None) -> ImpeachmentDemand:
    """The Procurator records one of the four rulings on an opened impeachment:
    ``replace`` (``new_tribune_user`` becomes the Tribune at once, ``do_replace_tribune``'s rules; the replaced
    account loses every power), ``bonus`` (a bonus to the complainants, recorded), ``unfounded`` (rejected) or
    ``trivial`` (closed; its ``reason`` stays hidden until the game ends: it is not copied into the audit row).

    Returns the demand. Raises ``NotAllowed`` (not the Procurator), ``InvalidInput`` (unknown ruling; a new
    Tribune given for another ruling or missing for ``replace``; see ``do_replace_tribune``), ``WrongState`` (not
    opened, already ruled, game not running).
    """
    now = now or timezone.now()
    demand = ImpeachmentDemand.objects.select_for_update(of=("self",)).select_related("game", "tribune").get(pk=demand.pk)
    game = demand.game
    _check_procurator(game, acting_user)
    _check_running(game)
    if ruling not in ImpeachmentRuling.values:
        raise InvalidInput(_("Choose one of the four rulings."), rule="L-IMPEACH-2")
    if demand.opened_at is None:
        raise WrongState(_("Open the impeachment inbox and hear the Tribune first."),
                         rule="L-IMPEACH-2")
    if demand.ruled_at is not None:
        raise WrongState(_("The Procurator has already ruled on this demand."),
                         rule="L-IMPEACH-2")
    if (ruling == ImpeachmentRuling.REPLACE) != (new_tribune_user is not None):
        raise InvalidInput(_("A new Tribune is named when, and only when, the Tribune is replaced."),
                           rule="L-IMPEACH-2")
    if ruling == ImpeachmentRuling.REPLACE:
        _replace_tribune(demand.tribune, new_tribune_user, acting_user=acting_user, now=now)
    demand.ruling = ruling
    demand.ruled_at = now
    demand.reason = (reason or "").strip()
    demand.new_tribune_user = new_tribune_user
    demand.save(update_fields=["ruling", "ruled_at", "reason", "new_tribune_user"])
    payload = {"demand": demand.pk, "city": demand.city_id, "ruling": ruling}
    if ruling == ImpeachmentRuling.BONUS:
        payload["complainants"] = sorted(demand.signatures.values_list("resident_id", flat=True))
    if ruling != ImpeachmentRuling.TRIVIAL:
        payload["reason"] = demand.reason
    record_event(game, "impeachment.ruled", actor=acting_user, at=now, payload=payload)
    return demand


def visible_ruling_reason(viewer, demand: ImpeachmentDemand) -> str | None:
    """The reason of ``demand``'s ruling as ``viewer`` may read it: a trivial ruling's reason only for the
    Procurator until the game ends; None when hidden."""
    if demand.ruling != ImpeachmentRuling.TRIVIAL or demand.game.status == GameStatus.FINISHED:
        return demand.reason
    return demand.reason if policies.holds_role(viewer, demand.game_id, HOST_STAFF_KIND) else None


# --------------------------------------------------------------------------------------------------------------
# The mafia acknowledge their role; the Consigliere confirms it to the Procurator
# --------------------------------------------------------------------------------------------------------------

def mafia_acknowledgements(game: Game) -> list[tuple[City, list[Resident], list[Resident]]]:
    """Per city of ``game`` in order: (city, its mafia who acknowledged their role, those who did not yet), each by
    name. Names the mafia: for the Consigliere's page only (``knowledge.knows_night_of``-like
    knowledge: the Consigliere knows all mafia)."""
    acknowledged = set(RoleAcknowledgement.objects.filter(game=game).values_list("resident_id", flat=True))
    rows = []
    for city in City.objects.filter(game=game).order_by("number"):
        mafia = list(Resident.objects.filter(city=city, alignment=Alignment.MAFIA).order_by("name"))
        rows.append((city, [r for r in mafia if r.pk in acknowledged], [r for r in mafia if r.pk not in acknowledged]))
    return rows


def mafia_confirmed_at(game: Game):
    """When the Consigliere confirmed to the Procurator that every mafioso acknowledged their role (aware UTC),
    or None."""
    return GameEvent.objects.filter(game=game, kind="assign.confirmed").values_list("at", flat=True).first()


@transaction.atomic
def do_acknowledge_mafia_role(game: Game, *, acting_user, now: datetime | None = None) -> RoleAcknowledgement:
    """A mafioso acknowledges their criminal role, once. Audited for the Consigliere only
    (``mafia.*`` events). Returns the RoleAcknowledgement. Raises ``NotAllowed`` (not a mafioso of the game:
    the same refusal for every other account), ``WrongState`` (game over; already acknowledged)."""
    now = now or timezone.now()
    viewer_reads.forget_viewer_cache(acting_user)
    seat = policies.seat_in(acting_user, game) if acting_user is not None else None
    if seat is None or seat.alignment != Alignment.MAFIA:
        raise NotAllowed(_("Only the mafia acknowledge a mafia role."), rule="L-ASSIGN-4")
    if game.status == GameStatus.FINISHED:
        raise WrongState(_("The game is over."))
    seat = Resident.objects.select_for_update(of=("self",)).get(pk=seat.pk)
    if RoleAcknowledgement.objects.filter(resident=seat).exists():
        raise WrongState(_("You have already acknowledged your role."), rule="L-ASSIGN-4")
    row = RoleAcknowledgement.objects.create(game=game, resident=seat, at=now)
    record_event(game, "mafia.acknowledged", actor=acting_user, at=now,
                 payload={"resident": seat.pk, "city": seat.city_id})
    return row


@transaction.atomic
def do_confirm_mafia_acknowledged(game: Game, *, acting_user, now: datetime | None = None) -> Message:
    """The Consigliere confirms to the Procurator, in the bar, that every mafioso of every city has
    acknowledged their role, naming nobody: a site message without names or numbers per city, and
    an ``assign.confirmed`` audit row without names. Once.

    Returns the Message. Raises ``NotAllowed`` (not the Consigliere), ``WrongState`` (no mafia drawn yet, some
    mafioso has not acknowledged, already confirmed, game over, no bar).
    """
    now = now or timezone.now()
    if acting_user is None or not policies.holds_role_of(acting_user, game, "night_staff_kinds"):
        raise NotAllowed(_("Only the Consigliere confirms the mafia to the Procurator."),
                         rule="L-ASSIGN-4")
    game = Game.objects.select_for_update().get(pk=game.pk)
    if game.status == GameStatus.FINISHED:
        raise WrongState(_("The game is over."))
    if mafia_confirmed_at(game) is not None:
        raise WrongState(_("You have already confirmed it to the Procurator."),
                         rule="L-ASSIGN-4")
    rows = mafia_acknowledgements(game)
    total = sum(len(done) + len(waiting) for _city, done, waiting in rows)
    missing = sum(len(waiting) for _city, _done, waiting in rows)
    if total == 0:
        raise WrongState(_("The mafia are not drawn yet."), rule="L-ASSIGN-4")
    if missing:
        raise WrongState(_("%(missing)d of %(total)d mafiosi have not acknowledged their role yet.")
                         % {"missing": missing, "total": total}, rule="L-ASSIGN-4")
    bar_kind = ruleset_of(game).inbox_kind_for("bar")
    bar = Inbox.objects.filter(game=game, kind=bar_kind, killed_at__isnull=True).order_by("pk").first() if bar_kind else None
    if bar is None:
        raise WrongState(_("This game has no bar."), rule="L-INBOX-8")
    with translation.override(game.language):
        text = _("The Consigliere confirms: every mafioso of every city has acknowledged their role.")
    message = do_post_site_message(bar, text, acting_user=None, now=now)
    record_event(game, "assign.confirmed", actor=acting_user, at=now, payload={"inbox": bar.pk})
    return message


__all__ = [
    "IMPEACHMENT_SHARE",
    "do_acknowledge_mafia_role",
    "do_confirm_mafia_acknowledged",
    "do_demand_impeachment",
    "do_open_impeachment_inbox",
    "do_replace_tribune",
    "do_rule_on_impeachment",
    "do_sign_impeachment_demand",
    "has_acknowledged_role",
    "impeachment_threshold_met",
    "living_signatures",
    "mafia_acknowledgements",
    "mafia_confirmed_at",
    "open_impeachment_demand_of",
    "visible_ruling_reason",
]
