"""State changes of Lepra's setup draws: the mafia draw (L-ASSIGN) and the commissar draw (L-COMM).

Each ``do_<verb>_<noun>(..., *, acting_user, now=None)`` runs in one transaction, checks the rules first, writes
a ``GameEvent`` and raises a ``kernel.errors.RuleViolation`` subclass (nothing changed) when refused.
Randomness comes from ``system_rng()`` (``secrets.SystemRandom()``, L-ASSIGN-3) unless a caller passes ``rng``.

What must never leak: the shuffled lists together with the numbers name the mafia, so ``MafiaDraw.lists`` is
written only to the notary inbox (no members) and shown only after the game (``draw_for_verification``);
the Procurator names numbers without seeing the lists. A declined offer's reason is stored on the offer and
shown to nobody but the candidate (L-COMM-2); audit payloads name no alignment and no reason.
"""
from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from datetime import datetime

from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from cities.i18n import in_game_language
from cities.models import Alignment, City, Game, GameStatus, Resident, StaffRole
from cities.recruitment_services import do_append_to_recruitment_post, recruitment_post_of
from cities.resident_services import do_set_resident_flags
from cities.services import check_procurator
from inboxes.membership_services import do_add_member_by_site
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.policies import seat_in
from inboxes.services import do_create_inbox, do_post_site_message
from inboxes.viewer_reads import forget_viewer_cache
from kernel.audit import record_event
from kernel.errors import InvalidInput, NotAllowed, WrongState
from roles import draw
from rulesets.lepra.models import CommissarOffer, MafiaDraw
from rulesets.lepra import seats
from rulesets.lepra.setup import draw as setup_draw
from rulesets.lepra.staff_kinds import StaffKind

#: At most three offers per city (L-COMM-3).
MAX_OFFERS = 3
MAX_REASON_LENGTH = 2000


def system_rng() -> random.Random:
    """The generator of every production draw (L-ASSIGN-3), ``roles.draw.system_rng``. Tests may patch it here."""
    return draw.system_rng()


def _role(game: Game, kind: str) -> StaffRole | None:
    return StaffRole.objects.filter(game=game, kind=kind).first()


def mafia_draw_of(game: Game) -> MafiaDraw | None:
    """The mafia draw of ``game`` or None. Its ``lists`` are secret until the game ends: do not render them."""
    return MafiaDraw.objects.filter(game=game).first()


def _bar_of(game: Game, now: datetime) -> Inbox:
    """The bar (L-INBOX-8: Procurator organizes, the Consigliere reads), created when missing."""
    bar = Inbox.objects.filter(game=game, kind=LepraInboxKind.BAR, killed_at__isnull=True).order_by("pk").first()
    if bar is None:
        bar = do_create_inbox(game, LepraInboxKind.BAR, title=in_game_language(game, lambda: _("Bar")),
                              organizer=_role(game, StaffKind.PROCURATOR),
                              acting_user=None, now=now)
    return bar


def notary_text(lists: Mapping[str, Sequence[str]], city_names: Mapping[str, str], salt: str) -> str:
    """The notary message of the draw (L-ASSIGN-1): per city, its name and the numbered shuffled list, then the
    salt. ``lists`` and ``city_names`` are keyed by the city number as a string."""
    parts = []
    for number in sorted(lists, key=int):
        rows = "\n".join(f"{i}. {name}" for i, name in enumerate(lists[number], 1))
        parts.append(f"**{city_names[number]}**\n\n{rows}")
    parts.append(_("Salt: `%(salt)s`") % {"salt": salt})
    return "\n\n".join(parts)


@transaction.atomic
def do_start_mafia_draw(game: Game, *, acting_user, rng: random.Random | None = None,
                        now: datetime | None = None) -> MafiaDraw:
    """Start the mafia draw of ``game`` (L-ASSIGN-1, L-ASSIGN-3). Procurator only, once, after the city lists are
    published (L-CITY-4) and the Consigliere is appointed (L-STAFF-4).

    Shuffles each city's residents (names sorted first, then ``rng``, default ``system_rng()``), draws a 32-byte
    salt, computes the commitment (``roles.draw`` documents the exact serialization), writes the numbered lists
    and the salt into a new notary inbox without members, appends the commitment to the recruitment post (public
    from this moment, before any number exists) and asks the Procurator in the bar for the numbers.
    Returns the MafiaDraw. Raises ``NotAllowed``, ``WrongState`` (lists unpublished, no Consigliere, already
    started, game not in setup).
    """
    now = now or timezone.now()
    check_procurator(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    if game.status != GameStatus.SETUP:
        raise WrongState(_("The mafia draw takes place during the setup of the game."), rule="L-ASSIGN-1")
    if game.lists_published_at is None:
        raise WrongState(_("Publish the city lists first."), rule="L-CITY-4")
    if _role(game, StaffKind.CONSIGLIERE) is None:
        raise WrongState(_("Appoint the Consigliere first: he receives the lists."), rule="L-ASSIGN-1")
    if MafiaDraw.objects.filter(game=game).exists():
        raise WrongState(_("The mafia draw has already started."), rule="L-ASSIGN-3")
    rng = rng or system_rng()
    cities = list(City.objects.filter(game=game).order_by("number"))
    by_city = {c.number: sorted(Resident.objects.filter(city=c).values_list("name", flat=True)) for c in cities}
    lists = setup_draw.shuffled_lists(by_city, rng)
    salt = draw.new_salt(rng)
    digest = draw.commitment(lists, salt)
    notary = do_create_inbox(game, LepraInboxKind.NOTARY, title=in_game_language(game, lambda: _("Notary: the mafia draw")),
                             acting_user=None, now=now)
    do_post_site_message(notary, notary_text(lists, {str(c.number): c.name for c in cities}, salt),
                         acting_user=None, now=now)
    do_append_to_recruitment_post(
        game, "## " + _("The mafia draw") + "\n\n"
        + _("Commitment (SHA-256 of the shuffled city lists and a secret salt): `%(digest)s`") % {"digest": digest},
        acting_user=None, now=now)
    mafia_draw = MafiaDraw.objects.create(game=game, lists=lists, salt=salt, commitment=digest, notary=notary,
                                          committed_at=now)
    do_post_site_message(_bar_of(game, now), _(
        "The shuffled lists are with the notary and the commitment `%(digest)s` is published in the recruitment "
        "post. Procurator, name the numbers, or let the site draw them.") % {"digest": digest},
        acting_user=None, now=now)
    record_event(game, "draw.committed", actor=acting_user, at=now, payload={"draw": mafia_draw.pk, "commitment": digest})
    return mafia_draw


def parse_numbers(text: str) -> list[int]:
    """Numbers typed by the Procurator: integers separated by commas or spaces. Raises ``InvalidInput``."""
    parts = [p for p in (text or "").replace(",", " ").split() if p]
    try:
        return [int(p) for p in parts]
    except ValueError:
        raise InvalidInput(_("Numbers are whole numbers separated by commas or spaces.")) from None


def _check_city_numbers(city: City, numbers: Sequence[int], population: int) -> list[int]:
    count = setup_draw.mafia_count(population)
    if len(numbers) != count:
        raise InvalidInput(_("%(city)s: exactly %(count)d numbers are needed, %(given)d given.")
                           % {"city": city.name, "count": count, "given": len(numbers)}, rule="L-CITY-2")
    if len(set(numbers)) != len(numbers):
        raise InvalidInput(_("%(city)s: the numbers must be distinct.") % {"city": city.name}, rule="L-ASSIGN-2")
    if any(not 1 <= n <= population for n in numbers):
        raise InvalidInput(_("%(city)s: the numbers must be between 1 and %(n)d.") % {"city": city.name, "n": population},
                           rule="L-ASSIGN-2")
    return setup_draw.check_numbers(list(numbers), population, count)


@transaction.atomic
def do_name_mafia_numbers(game: Game, numbers: Mapping[int, Sequence[int]] | None, *, acting_user,
                          rng: random.Random | None = None, now: datetime | None = None) -> MafiaDraw:
    """Name the mafia numbers of every city (L-ASSIGN-2) and make the residents at those positions mafia.

    ``numbers`` maps each city number to exactly ``setup_draw.mafia_count(n)`` distinct positions in 1..n (L-CITY-2),
    as the Procurator typed them; None lets the site draw them with ``rng`` (default ``system_rng()``).
    Procurator only, once, after ``do_start_mafia_draw`` (so the commitment was public first). Posts the
    numbers in the bar, sets the alignments and creates each city's mafia inbox with its mafia as members,
    organized by the Consigliere (L-ASSIGN-4, L-INBOX-4). Returns the MafiaDraw.
    Raises ``NotAllowed``, ``WrongState`` (no draw, numbers already named) or ``InvalidInput`` (bad numbers).
    """
    now = now or timezone.now()
    check_procurator(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    mafia_draw = MafiaDraw.objects.select_for_update().filter(game=game).first()
    if mafia_draw is None:
        raise WrongState(_("Start the mafia draw first: the commitment is published before the numbers."),
                         rule="L-ASSIGN-3")
    if mafia_draw.numbers is not None:
        raise WrongState(_("The numbers are already named."), rule="L-ASSIGN-2")
    if now <= mafia_draw.committed_at:
        raise WrongState(_("The numbers are named after the commitment is published."), rule="L-ASSIGN-3")
    cities = list(City.objects.filter(game=game).order_by("number"))
    by_site = numbers is None
    rng = rng or system_rng()
    chosen: dict[str, list[int]] = {}
    for city in cities:
        population = len(mafia_draw.lists[str(city.number)])
        if by_site:
            chosen[str(city.number)] = setup_draw.draw_numbers(population, setup_draw.mafia_count(population), rng)
        else:
            if city.number not in numbers:
                raise InvalidInput(_("%(city)s: no numbers given.") % {"city": city.name}, rule="L-ASSIGN-2")
            chosen[str(city.number)] = _check_city_numbers(city, numbers[city.number], population)
    mafia_draw.numbers = chosen
    mafia_draw.numbers_at = now
    mafia_draw.numbers_by_site = by_site
    mafia_draw.save(update_fields=["numbers", "numbers_at", "numbers_by_site"])
    consigliere = _role(game, StaffKind.CONSIGLIERE)
    bar = _bar_of(game, now)
    lines = []
    for city in cities:
        names = [mafia_draw.lists[str(city.number)][k - 1] for k in chosen[str(city.number)]]
        mafia = list(Resident.objects.filter(city=city, name__in=names))
        for resident in mafia:
            do_set_resident_flags(resident, alignment=Alignment.MAFIA, acting_user=None, now=now)
            forget_viewer_cache(resident.user)
        do_create_inbox(game, LepraInboxKind.MAFIA, city=city,
                        title=in_game_language(game, lambda: _("%(city)s: mafia") % {"city": city.name}),
                        organizer=consigliere, members=mafia, acting_user=None, now=now)
        lines.append(f"{city.name}: {', '.join(map(str, chosen[str(city.number)]))}")
    who = _("drawn by the site") if by_site else _("named by the Procurator")
    do_post_site_message(bar, _("The mafia numbers (%(who)s):") % {"who": who} + "\n\n" + "\n\n".join(lines),
                         acting_user=None, now=now)
    record_event(game, "draw.numbers", actor=acting_user, at=now, payload={"draw": mafia_draw.pk, "by_site": by_site})
    return mafia_draw


def draw_for_verification(game: Game) -> MafiaDraw:
    """The mafia draw of a finished game, for the verification page and ``manage.py verify_draw``
    (L-ASSIGN-3, L-ARCH-3). Raises ``WrongState`` before the game is finished (the lists and the numbers would
    name the mafia) and when the game had no draw."""
    if game.status != GameStatus.FINISHED:
        raise WrongState(_("The draw can be verified after the game."), rule="L-ASSIGN-3")
    mafia_draw = MafiaDraw.objects.filter(game=game, numbers__isnull=False).first()
    if mafia_draw is None:
        raise WrongState(_("This game had no mafia draw."), rule="L-ASSIGN-3")
    return mafia_draw


def verification_problems(mafia_draw: MafiaDraw) -> list[str]:
    """Everything that does not check out in a finished game's draw, as sentences in the active language; [] when the
    commitment recomputes from the lists and the salt, was published in the recruitment post, and the residents
    at the numbers are exactly the game's mafia (L-ASSIGN-2, L-ASSIGN-3)."""

    problems = []
    if not draw.verify_commitment(mafia_draw.lists, mafia_draw.salt, mafia_draw.commitment):
        problems.append(_("The commitment %(commitment)s does not match the lists and the salt (recomputed: "
                          "%(recomputed)s).") % {"commitment": mafia_draw.commitment,
                                                  "recomputed": draw.commitment(mafia_draw.lists, mafia_draw.salt)})
    post = recruitment_post_of(mafia_draw.game)
    if post is None or mafia_draw.commitment not in post.body:
        problems.append(_("The commitment is not in the recruitment post."))
    for city in City.objects.filter(game=mafia_draw.game).order_by("number"):
        listed = mafia_draw.lists.get(str(city.number), [])
        named = {listed[k - 1] for k in (mafia_draw.numbers or {}).get(str(city.number), []) if 0 < k <= len(listed)}
        actual = set(Resident.objects.filter(city=city, alignment=Alignment.MAFIA).values_list("name", flat=True))
        if named != actual:
            problems.append(_("%(city)s: the residents at the numbers are not the city's mafia.") % {"city": city.name})
        if sorted(listed) != sorted(Resident.objects.filter(city=city).values_list("name", flat=True)):
            problems.append(_("%(city)s: the list is not the city's residents.") % {"city": city.name})
    return problems


# --------------------------------------------------------------------------------------------------------------
# The commissar draw (L-COMM)
# --------------------------------------------------------------------------------------------------------------

def city_commissar_state(city: City) -> str:
    """For the Procurator's page only (L-STAFF-6: "city C has no commissar" is his alone): "accepted",
    "pending", "none" (three declines, or every resident asked), "open" (another offer may be made) or
    "not_started"."""
    offers = list(CommissarOffer.objects.filter(city=city))
    if any(o.accepted for o in offers):
        return "accepted"
    if any(o.is_pending for o in offers):
        return "pending"
    if len(offers) >= MAX_OFFERS or len(offers) >= Resident.objects.filter(city=city).count():
        return "none"
    return "open" if offers else "not_started"


@transaction.atomic
def do_offer_commissar(city: City, *, acting_user, rng: random.Random | None = None,
                       now: datetime | None = None) -> CommissarOffer:
    """Offer the commissar's post of ``city`` to a random resident not asked before (L-COMM-1), through a new
    secret inbox whose member is the candidate, organized by the Procurator (who reads and posts there as the
    organizer of a secret inbox, ``inboxes.policies``). Procurator only; after the mafia numbers are named; one offer at a time,
    the next only after a decline, at most three (L-COMM-3). Returns the offer.
    Raises ``NotAllowed``, ``WrongState`` (numbers not named, an offer pending, accepted, three declines).
    """
    now = now or timezone.now()
    game = city.game
    check_procurator(game, acting_user)
    game = Game.objects.select_for_update().get(pk=game.pk)
    if game.status != GameStatus.SETUP:
        raise WrongState(_("The commissar draw takes place during the setup of the game."), rule="L-COMM-1")
    mafia_draw = MafiaDraw.objects.filter(game=game).first()
    if mafia_draw is None or mafia_draw.numbers is None:
        raise WrongState(_("The commissar draw follows the mafia draw."), rule="L-COMM-1")
    state = city_commissar_state(city)
    if state == "accepted":
        raise WrongState(_("%(city)s already has its commissar.") % {"city": city.name}, rule="L-COMM-1")
    if state == "pending":
        raise WrongState(_("%(city)s: wait for the answer to the current offer.") % {"city": city.name}, rule="L-COMM-3")
    if state == "none":
        raise WrongState(_("%(city)s: no more offers (at most three).") % {"city": city.name}, rule="L-COMM-3")
    asked = CommissarOffer.objects.filter(city=city).values_list("candidate_id", flat=True)
    pool = list(Resident.objects.filter(city=city).exclude(pk__in=asked).order_by("pk"))
    candidate = (rng or system_rng()).choice(pool)
    number = CommissarOffer.objects.filter(city=city).count() + 1
    procurator = _role(game, StaffKind.PROCURATOR)
    # The title carries no offer number: "3 of 3" would tell the last candidate, who may be a mafioso, that a
    # decline leaves the city without a commissar, which only the Procurator may know (L-STAFF-6).
    inbox = do_create_inbox(game, LepraInboxKind.SECRET,
                            title=in_game_language(
                                game, lambda: _("Commissar offer (%(city)s)") % {"city": city.name}),
                            city=city, organizer=procurator, members=[candidate], acting_user=None, now=now)
    offer = CommissarOffer.objects.create(game=game, city=city, candidate=candidate, inbox=inbox, number=number,
                                          offered_at=now)
    url = reverse("commissar_offer", args=[game.slug, offer.public_id])
    do_post_site_message(inbox, _(
        "%(name)s, the Procurator offers you the post of commissar of %(city)s. [Accept or decline](%(url)s). "
        "The Procurator reads this inbox: if you decline, give your reason (if any) on the answer page, not "
        "here; he learns only that you declined.") % {"name": candidate.name, "city": city.name, "url": url},
        acting_user=None, now=now)
    forget_viewer_cache(candidate.user)
    record_event(game, "commissar.offered", actor=acting_user, at=now,
                 payload={"offer": offer.pk, "city": city.pk, "number": number})
    return offer


def offer_for_candidate(user, game: Game, offer_id) -> CommissarOffer | None:
    """The offer of ``game`` whose public id is ``offer_id`` when ``user`` holds the candidate's seat now
    (L-REPLACE-1), else None (the page answers 404 alike for missing and foreign offers)."""
    seat = seat_in(user, game)
    if seat is None:
        return None
    return (CommissarOffer.objects.select_related("city", "inbox")
            .filter(game=game, public_id=str(offer_id), candidate=seat).first())


def may_accept(offer: CommissarOffer) -> bool:
    """True when the candidate may accept (L-COMM-2): an honest candidate. A mafioso is offered only "decline"."""
    return offer.candidate.alignment == Alignment.HONEST


@transaction.atomic
def do_answer_commissar_offer(offer: CommissarOffer, *, accept: bool, acting_user, reason: str = "",
                              now: datetime | None = None) -> CommissarOffer:
    """The candidate accepts or declines ``offer`` (L-COMM-2). Only the user holding the candidate's seat; only
    while pending. A mafioso may only decline: an acceptance is refused with ``NotAllowed``, changing nothing.

    Decline: the optional ``reason`` (at most 2000 characters) is stored on the offer only; the site tells the
    offer inbox "declined" without it (the Procurator never sees why). Accept: the resident becomes the city's
    commissar, joins the police station (created when missing, organized by the Procurator, L-INBOX-3), and the
    Tribune of the city learns it through ``inboxes.knowledge.knows_seat_role`` (L-COMM-4; audited).
    Raises ``NotAllowed`` (not the candidate, a mafioso accepting), ``WrongState`` (answered) or ``InvalidInput``.
    """
    now = now or timezone.now()
    offer = CommissarOffer.objects.select_for_update(of=("self",)).select_related("game", "city", "candidate", "inbox").get(pk=offer.pk)
    game = offer.game
    forget_viewer_cache(acting_user)
    seat = seat_in(acting_user, game) if acting_user is not None else None
    if seat is None or seat.pk != offer.candidate_id:
        raise NotAllowed(_("No such offer."), rule="L-COMM-2")
    if not offer.is_pending:
        raise WrongState(_("You have already answered this offer."), rule="L-COMM-2")
    if game.status != GameStatus.SETUP:
        raise WrongState(_("The commissar draw is over."), rule="L-COMM-1")
    candidate = (Resident.objects.select_for_update(of=("self",)).select_related("game", seats.SEAT)
                 .get(pk=offer.candidate_id))
    reason = (reason or "").strip()
    if accept and reason:
        raise InvalidInput(_("A reason is given only when declining."), rule="L-COMM-2")
    if len(reason) > MAX_REASON_LENGTH:
        raise InvalidInput(_("The reason is too long: %(length)d characters, at most %(max)d.")
                           % {"length": len(reason), "max": MAX_REASON_LENGTH})
    if accept and candidate.alignment != Alignment.HONEST:
        raise NotAllowed(_("You cannot accept this offer: decline it."), rule="L-COMM-2")
    offer.answered_at = now
    offer.accepted = bool(accept)
    offer.decline_reason = "" if accept else reason
    offer.save(update_fields=["answered_at", "accepted", "decline_reason"])
    if accept:
        seats.do_set_seat_flags(candidate, is_commissar=True, acting_user=None, now=now)
        police = Inbox.objects.filter(game=game, kind=LepraInboxKind.POLICE, killed_at__isnull=True).order_by("pk").first()
        if police is None:
            do_create_inbox(game, LepraInboxKind.POLICE, title=in_game_language(game, lambda: _("Police station")),
                            organizer=_role(game, StaffKind.PROCURATOR), members=[candidate], acting_user=None, now=now)
        else:
            do_add_member_by_site(police, candidate, acting_user=None, now=now)
        do_post_site_message(offer.inbox, _("%(name)s accepted: the commissar of %(city)s.")
                             % {"name": candidate.name, "city": offer.city.name}, acting_user=None, now=now)
        tribune = StaffRole.objects.filter(game=game, kind=StaffKind.TRIBUNE, city=offer.city).first()
        record_event(game, "commissar.tribune_told", actor=None, at=now,
                     payload={"city": offer.city_id, "tribune": tribune.pk if tribune else None})
    else:
        do_post_site_message(offer.inbox, _("%(name)s declined.") % {"name": candidate.name}, acting_user=None, now=now)
    forget_viewer_cache(candidate.user)
    record_event(game, "commissar.answered", actor=acting_user, at=now,
                 payload={"offer": offer.pk, "accepted": bool(accept)})
    return offer
