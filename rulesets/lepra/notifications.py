"""What Lepra's records tell whom (the engine's notifications, ``archive``, ask ``LepraRuleset``): the audience of a
day's reminded deadlines (``reminder_audience``), the notification of a proxy request to its Tribune
(``record_notifications``, L-VOTE-4) and the day's records that the archive's timeline names."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Q

from archive.models import NotificationKind
from cities.models import City, LifeStatus, ScheduledEvent, StaffKind, StaffRole
from inboxes import policies
from inboxes.models import Inbox, InboxKind
from rulesets.lepra.models import CourtCase, ProxyRequest, ProxyState, VotingSession


def city_deadline_audience(event: ScheduledEvent) -> list:
    """The users a city game's deadline concerns, each one able to read the inbox where it happens
    (``readers_of_inbox``): for a voting (``voting_open``/``voting_close``), the living residents of its city and
    its Tribune, among the readers of the city's current inbox; for the night's end, the living residents of the
    game among the readers of their city's inbox. For a ruleset's ``reminder_audience``."""

    User = get_user_model()
    cities: list[City] = []
    if event.kind in ("voting_open", "voting_close"):
        session = VotingSession.objects.filter(pk=(event.payload or {}).get("session")).select_related("city").first()
        if session is not None:
            cities = [session.city]
    elif event.kind == "night_end":
        cities = list(City.objects.filter(game=event.game_id))
    users = set()
    for city in cities:
        inbox = Inbox.objects.filter(city=city, kind=InboxKind.CITY, rolled_over_at__isnull=True).select_related("game").order_by("-pk").first()
        if inbox is None:
            continue
        readers = policies.readers_of_inbox(inbox)
        concerned = readers.filter(Q(seats__city=city, seats__status=LifeStatus.ALIVE)
                                   | Q(staff_roles__city=city, staff_roles__kind=StaffKind.TRIBUNE))
        users |= set(concerned.values_list("pk", flat=True))
    return list(User.objects.filter(pk__in=users, is_active=True).order_by("pk"))


def proxy_request_notifications(*, since, now, live_statuses) -> list[tuple[int, str, dict]]:
    """A proxy request written in (``since``, ``now``] and still requested, told to its city's Tribune
    (L-VOTE-4): ``(user id, NotificationKind.OFFER, {"proxy": request, "game_id": ...})`` per Tribune."""
    found = []
    for p in ProxyRequest.objects.filter(requested_at__gt=since, requested_at__lte=now, state=ProxyState.REQUESTED,
                                         game__status__in=live_statuses):
        for role in StaffRole.objects.filter(game_id=p.game_id, kind=StaffKind.TRIBUNE, city_id=p.city_id):
            found.append((role.user_id, NotificationKind.OFFER, {"proxy": p, "game_id": p.game_id}))
    return found


def timeline_records(game) -> dict[str, dict]:
    """The voting sessions and court cases of ``game`` by id, with their cities, as the archive's timeline names
    them (``voting.opened``/``voting.closed``, ``court.case_opened``)."""
    return {"sessions": {s.pk: s for s in VotingSession.objects.filter(game=game).select_related("city")},
            "cases": {c.pk: c for c in CourtCase.objects.filter(game=game).select_related("city")}}
