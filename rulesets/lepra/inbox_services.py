"""Lepra's standing inboxes (L-INBOX) and what deaths do to them: opening them as the game starts, the daily
rollover of the city inboxes (L-INBOX-1), the court's renewal (L-INBOX-2), the memberships of the dead, a spirit's
release from the cemetery and its rest there (L-SPIRIT-2), built from the shared inbox services' building blocks."""
from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from django.db import transaction
from django.db.models import Q
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from cities.i18n import in_game_language
from cities.models import City, Game, LifeStatus, Resident, StaffRole
from inboxes import policies
from inboxes.models import Inbox, Membership, MembershipState, Message
from inboxes.rendering import render_markdown
from inboxes.services import check_not_finished, check_site_or_procurator, current_inboxes, new_inbox, roll_over_many
from kernel.audit import record_event
from kernel.errors import NotAllowed, WrongState
from kernel.rulesets import ruleset_of, seat_state_relations
from rulesets.lepra.kinds import LepraInboxKind as K
from rulesets.lepra.staff_kinds import StaffKind


def _check_site_or_procurator(game: Game, acting_user, rule: str) -> None:
    """Raise ``NotAllowed`` citing ``rule`` unless ``acting_user`` is None (the site) or the Procurator of ``game``."""
    if acting_user is not None and not policies.holds_role(acting_user, game, StaffKind.PROCURATOR):
        raise NotAllowed(_("Only the Procurator of this game may do this."), rule=rule)


def release_from_cemetery(resident: Resident, *, now: datetime) -> int:
    """Take a resident who became a spirit out of the cemetery: their cemetery memberships are
    removed (no ban). A building block of the spirit rule (callers hold the transaction). Returns the rows changed."""
    return Membership.objects.filter(resident=resident, inbox__kind=K.CEMETERY).update(
        state=MembershipState.REMOVED, banned_until=None, since=now)


@transaction.atomic
def do_open_game_inboxes(game: Game, *, acting_user=None, now: datetime | None = None) -> list[Inbox]:
    """Create the standing inboxes of ``game`` as it starts, skipping those that exist.

    Per city: the city inbox (organizer the city's Tribune; members all living residents of the city, the dead
    banned) and one personal inbox per resident (organizer the Tribune; member the resident).
    Per game: cemetery (Procurator; members the dead), office (Procurator; no resident members: Tribunes and the
    Arbiter read it by role), bar (Procurator), police station (Procurator) and supreme court (Arbiter); the game's
    ruleset chooses the members where it says so (``RulesetSpec.standing_members``: Lepra's cemetery without the
    spirits, the living commissars and the living sitting judges). Mafia inboxes and the notary are the draw's:
    left as they are.

    ``acting_user`` None (the site) or the Procurator; ``now`` aware UTC. Returns the created inboxes, in
    creation order. Raises ``NotAllowed`` (anyone else), ``WrongState`` (game over; a city without a Tribune or a
    game without Procurator or Arbiter: their inboxes need an organizer). Titles are in the game's language.
    """
    now = now or timezone.now()
    check_site_or_procurator(game, acting_user, "procurator_only")
    game = Game.objects.select_for_update().get(pk=game.pk)
    check_not_finished(game)
    roles = list(StaffRole.objects.filter(game=game).select_related("city"))
    procurator = next((r for r in roles if r.kind == StaffKind.PROCURATOR), None)
    arbiter = next((r for r in roles if r.kind == StaffKind.ARBITER), None)
    tribunes = {r.city_id: r for r in roles if r.kind == StaffKind.TRIBUNE}
    cities = list(City.objects.filter(game=game).order_by("number"))
    if procurator is None or arbiter is None:
        raise WrongState(_("Appoint the Procurator and the Supreme Arbiter before opening the inboxes."),
                         rule="L-STAFF")
    for city in cities:
        if city.pk not in tribunes:
            raise WrongState(_("%(city)s has no Tribune yet.") % {"city": city.name}, rule="L-STAFF-2")
    residents = list(Resident.objects.filter(game=game).select_related(*seat_state_relations())
                     .order_by("city__number", "name", "id"))
    existing_kinds = set(Inbox.objects.filter(game=game).values_list("kind", flat=True))
    cities_with_inbox = set(Inbox.objects.filter(game=game, kind=K.CITY).values_list("city_id", flat=True))
    with_personal = set(Inbox.objects.filter(game=game, kind=K.PERSONAL).values_list("resident_id", flat=True))
    created: list[Inbox] = []

    def living(rs):
        return [r for r in rs if r.status == LifeStatus.ALIVE]

    for city in cities:
        tribune = tribunes[city.pk]
        of_city = [r for r in residents if r.city_id == city.pk]
        if city.pk not in cities_with_inbox:
            title = in_game_language(game, lambda: _("%(city)s: city square") % {"city": city.name})
            created.append(new_inbox(game, K.CITY, title=title, actor=acting_user, now=now, city=city,
                                      organizer=tribune, members=living(of_city),
                                      banned=[r for r in of_city if r.status != LifeStatus.ALIVE]))
        for r in of_city:
            if r.pk in with_personal:
                continue
            title = in_game_language(game, lambda: _("Personal inbox: %(name)s") % {"name": r.name})
            created.append(new_inbox(game, K.PERSONAL, title=title, actor=acting_user, now=now, city=city,
                                      organizer=tribune, resident=r, members=[r]))
    per_game = [
        (K.CEMETERY, procurator, [r for r in residents if r.status != LifeStatus.ALIVE], lambda: _("Cemetery")),
        (K.OFFICE, procurator, [], lambda: _("Office")),
        (K.BAR, procurator, [], lambda: _("Bar")),
        (K.POLICE, procurator, [], lambda: _("Police station")),
        (K.COURT, arbiter, [], lambda: _("Supreme Court")),
    ]
    spec = ruleset_of(game)
    for kind, organizer, members, title_fn in per_game:
        if kind in existing_kinds:
            continue
        chosen = spec.standing_members(game, kind, residents)  # the ruleset's members (commissars, judges...)
        members = members if chosen is None else chosen
        created.append(new_inbox(game, kind, title=in_game_language(game, title_fn), actor=acting_user, now=now,
                                  organizer=organizer, members=members))
    record_event(game, "inboxes.opened", actor=acting_user, at=now, payload={"created": [i.pk for i in created]})
    return created


@transaction.atomic
def do_roll_over_city_inboxes_for_new_day(game: Game, *, acting_user=None, now: datetime | None = None) -> list[Inbox]:
    """The daily rollover of every city inbox of ``game`` (a new one each game day by default).

    For each city whose current city inbox was opened before the game's current day (``day_number``), roll it
    over as ``do_roll_over_inbox`` does, titled "<city>: city square, day N". A second run on the same day
    changes nothing (safe for a repeated scheduler tick). By the site (``acting_user`` None) or the Procurator.
    Returns the new inboxes. Raises ``NotAllowed`` or ``WrongState`` (game over).
    """
    now = now or timezone.now()
    _check_site_or_procurator(game, acting_user, "L-INBOX-1")
    game = Game.objects.select_for_update().get(pk=game.pk)
    check_not_finished(game)
    # One locking read for every city (the filter is the open-inbox check of ``_lock_open_inbox``).
    current = list(current_inboxes(game, K.CITY).filter(killed_at__isnull=True, day_number__lt=game.day_number)
                   .select_for_update(of=("self",)).select_related("city").order_by("city__number", "id"))
    for inbox in current:
        inbox.game = game
    with translation.override(game.language):
        pairs = [(inbox, _("%(city)s: city square, day %(day)d") % {"city": inbox.city.name, "day": game.day_number})
                 for inbox in current]
    return roll_over_many(pairs, actor=acting_user, now=now)


def renew_court(game: Game, *, actor, now: datetime) -> Inbox:
    """Replace the current court inbox by a new one whose members are the living sitting judges (the game's ruleset's
    ``standing_members_q``); everyone is banned in the old one, which links to the new one. A judge new to the court
    gets no access to old ones. Returns the new Inbox. For services that changed the judges (callers checked the rules,
    hold the transaction)."""
    old = current_inboxes(game, K.COURT).filter(killed_at__isnull=True).order_by("pk").select_for_update(of=("self",)).first()
    members = ruleset_of(game).standing_members_q(K.COURT)
    judges = ([] if members is None else
              list(Resident.objects.filter(members, game=game, status=LifeStatus.ALIVE).order_by("city__number")))
    arbiter = StaffRole.objects.filter(game=game, kind=StaffKind.ARBITER).first()
    title = in_game_language(game, lambda: _("Supreme Court, day %(day)d") % {"day": game.day_number})
    if old is not None:
        old.rolled_over_at = now
        old.save(update_fields=["rolled_over_at"])
        Membership.objects.filter(inbox=old).exclude(state=MembershipState.REMOVED).update(
            state=MembershipState.BANNED, banned_until=None, since=now)
    new = new_inbox(game, K.COURT, title=title, actor=actor, now=now, organizer=arbiter, members=judges,
                     predecessor=old)
    record_event(game, "court.renewed", actor=actor, at=now,
                 payload={"inbox": new.pk, "predecessor": old.pk if old else None, "judges": [j.pk for j in judges]})
    return new


@transaction.atomic
def do_renew_court_inbox(game: Game, *, acting_user=None, now: datetime | None = None) -> Inbox:
    """A new court inbox for the current set of judges (whenever they change): members the living sitting
    judges; everyone banned in the old one, which links to the new one. By the site (``acting_user`` None, e.g.
    after an election or a death) or the Arbiter. Returns the new Inbox. Raises ``NotAllowed`` or ``WrongState``.
    """
    now = now or timezone.now()
    if acting_user is not None and not policies.holds_role(acting_user, game, StaffKind.ARBITER):
        raise NotAllowed(_("Only the Supreme Arbiter may renew the court."), rule="L-STAFF-3")
    game = Game.objects.select_for_update().get(pk=game.pk)
    check_not_finished(game)
    return renew_court(game, actor=acting_user, now=now)


@transaction.atomic
def do_lay_spirit_to_rest(resident: Resident, *, acting_user=None, now: datetime | None = None) -> Resident:
    """At the end of the day a spirit goes to the cemetery: its state of the game's ruleset ended
    (``RulesetSpec.seat_state`` / ``end_seat_state``), a member of the current cemetery; its open voting
    memberships are removed. By the site or the Procurator. Raises ``NotAllowed`` or ``WrongState`` (not a spirit,
    no cemetery, game over)."""
    now = now or timezone.now()
    _check_site_or_procurator(resident.game, acting_user, "L-SPIRIT-2")
    resident = (Resident.objects.select_for_update(of=("self",)).select_related("game", *seat_state_relations())
                .get(pk=resident.pk))
    game = resident.game
    check_not_finished(game)
    spec = ruleset_of(game)
    if resident.status == LifeStatus.ALIVE or spec.seat_state(resident) is None:
        raise WrongState(_("%(name)s is not a spirit.") % {"name": resident.name},
                         rule="L-SPIRIT-2")
    cemetery = current_inboxes(game, K.CEMETERY).filter(killed_at__isnull=True).first()
    if cemetery is None:
        raise WrongState(_("This game has no cemetery yet."), rule="L-INBOX-6")
    spec.end_seat_state(resident, now=now)
    Membership.objects.filter(resident=resident, inbox__kind=K.VOTING, inbox__killed_at__isnull=True).exclude(
        state=MembershipState.REMOVED).update(state=MembershipState.REMOVED, banned_until=None, since=now)
    if not Membership.objects.filter(inbox=cemetery, resident=resident).update(
            state=MembershipState.MEMBER, banned_until=None, since=now):
        Membership.objects.create(inbox=cemetery, resident=resident, state=MembershipState.MEMBER, since=now)
    record_event(game, "resident.laid_to_rest", actor=acting_user, at=now, payload={"resident": resident.pk})
    return resident


def death_memberships(game: Game, residents: list[Resident], *, spirit_of: Mapping[int, bool],
                      now: datetime) -> dict[int, list[int]]:
    """What the deaths of ``residents`` (already dead, ``died_at`` = ``now``) do to their inboxes
    (``LepraRuleset.after_death_memberships``, in the shared death service's transaction): banned for good in
    their city inbox (L-INBOX-1); removed from the open precincts, from the open voting inboxes unless a spirit
    (L-SPIRIT-2), from every mafia inbox, mafia complaint and police station; the open voting inbox and precinct
    about them killed, the voters told the votes are void; a member of the current cemetery unless a spirit
    (L-INBOX-6). Returns the ids of the killed inboxes by resident id. Raises ``WrongState`` when someone is buried
    and the game has no cemetery yet (the caller's transaction rolls the deaths back).
    """
    ids = [r.pk for r in residents]
    buried = [pk for pk in ids if not spirit_of.get(pk)]
    cemetery = None
    if buried:
        cemetery = current_inboxes(game, K.CEMETERY).filter(killed_at__isnull=True).order_by("pk").first()
        if cemetery is None:
            raise WrongState(_("This game has no cemetery yet."), rule="L-INBOX-6")
    mine = Membership.objects.filter(resident_id__in=ids, inbox__game=game)
    # Banned in the city inbox: a running penalty ban becomes a ban for good.
    mine.filter(inbox__kind=K.CITY).exclude(state=MembershipState.REMOVED).update(
        state=MembershipState.BANNED, banned_until=None, since=now)
    removed_kinds = [K.MAFIA, K.POLICE, K.MAFIA_COMPLAINT]  # a mafia complaint goes as the mafia inbox does
    open_votes = Q(inbox__kind=K.PRECINCT) | Q(inbox__kind=K.VOTING, resident_id__in=buried)  # a spirit votes
    mine.filter(Q(inbox__kind__in=removed_kinds) | (open_votes & Q(inbox__killed_at__isnull=True))).exclude(
        state=MembershipState.REMOVED).update(state=MembershipState.REMOVED, banned_until=None, since=now)
    killed = list(Inbox.objects.filter(game=game, resident_id__in=ids, kind__in=[K.VOTING, K.PRECINCT],
                                       killed_at__isnull=True).order_by("pk").values_list("pk", "kind", "resident_id"))
    name_of = {r.pk: r.name for r in residents}
    notices = []
    for inbox_id, kind, resident_id in killed:
        if kind != K.VOTING:
            continue
        text = in_game_language(game, lambda rid=resident_id: _(  # voters are told
            "%(name)s has died: this voting is void and its votes do not count.") % {"name": name_of[rid]})
        notices.append(Message(inbox_id=inbox_id, author_name="Mafia Host", body=text,
                               body_html=render_markdown(text), received_at=now))
    if notices:
        Message.objects.bulk_create(notices)
    if killed:
        Inbox.objects.filter(pk__in=[pk for pk, _kind, _rid in killed]).update(killed_at=now)
    if cemetery is not None:
        known = set(Membership.objects.filter(inbox=cemetery, resident_id__in=buried).values_list("resident_id",
                                                                                                   flat=True))
        if known:
            Membership.objects.filter(inbox=cemetery, resident_id__in=known).update(
                state=MembershipState.MEMBER, banned_until=None, since=now)
        Membership.objects.bulk_create([Membership(inbox=cemetery, resident_id=pk, state=MembershipState.MEMBER,
                                                   since=now) for pk in buried if pk not in known])
    killed_of: dict[int, list[int]] = {}
    for inbox_id, _kind, resident_id in killed:
        killed_of.setdefault(resident_id, []).append(inbox_id)
    return killed_of
