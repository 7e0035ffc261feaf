"""What Lepra's records tell whom, and the engine's other reads of them (``archive`` and the policy ask
``LepraRuleset``): the audience of a day's reminded deadlines (``reminder_audience``), the notifications of a
commissar offer and a proxy request (``record_notifications``, L-COMM, L-VOTE-4: who is told, who may still see it,
its words and its link), the offer on the attention list,
the day's records that the archive's timeline names, the draw's notary (disclosed after the game, L-ASSIGN-3) and
the recorded winner (L-WIN)."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Exists, OuterRef, Q
from django.urls import reverse
from django.utils.translation import gettext, gettext_lazy

from archive.models import NotificationKind
from cities.models import City, GameEvent, LifeStatus, ScheduledEvent, StaffRole
from inboxes import policies
from inboxes.models import Inbox
from rulesets.lepra.events import LepraEventKind
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra.models import (
    CommissarOffer,
    CourtCase,
    GameResult,
    MafiaDraw,
    ProxyRequest,
    ProxyState,
    VotingSession,
)
from rulesets.lepra.staff_kinds import StaffKind


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
        inbox = Inbox.objects.filter(city=city, kind=LepraInboxKind.CITY, rolled_over_at__isnull=True).select_related("game").order_by("-pk").first()
        if inbox is None:
            continue
        readers = policies.readers_of_inbox(inbox)
        concerned = readers.filter(Q(seats__city=city, seats__status=LifeStatus.ALIVE)
                                   | Q(staff_roles__city=city, staff_roles__kind=StaffKind.TRIBUNE))
        users |= set(concerned.values_list("pk", flat=True))
    return list(User.objects.filter(pk__in=users, is_active=True).order_by("pk"))


def record_notifications(*, since, now, live_statuses) -> list[tuple[int, str, dict]]:
    """The records written in (``since``, ``now``] that are still waiting, told to whom they concern: a commissar
    offer to its candidate (L-COMM), a proxy request to its city's Tribune (L-VOTE-4); ``(user id,
    NotificationKind.OFFER, {"record": the offer or the request, "game_id": ...})`` each."""
    offers = CommissarOffer.objects.filter(offered_at__gt=since, offered_at__lte=now, answered_at__isnull=True,
                                           game__status__in=live_statuses).select_related("candidate")
    found = [(o.candidate.user_id, NotificationKind.OFFER, {"record": o, "game_id": o.game_id}) for o in offers
             if o.candidate.user_id is not None]
    for p in ProxyRequest.objects.filter(requested_at__gt=since, requested_at__lte=now, state=ProxyState.REQUESTED,
                                         game__status__in=live_statuses):
        for role in StaffRole.objects.filter(game_id=p.game_id, kind=StaffKind.TRIBUNE, city_id=p.city_id):
            found.append((role.user_id, NotificationKind.OFFER, {"record": p, "game_id": p.game_id}))
    return found


def record_querysets() -> list:
    """The offers and the proxy requests, with what ``record_still_allowed`` and the texts read, for a prefetch."""
    return [CommissarOffer.objects.select_related("candidate", "inbox", "inbox__game"),
            ProxyRequest.objects.select_related("resident", "city")]


def record_still_allowed(user, record) -> bool:
    """Whether ``user`` may still be told of ``record``: a commissar offer while unanswered, to its candidate's
    living seat, which reads the offer's inbox (L-COMM); a proxy request while waiting, to its city's Tribune
    (L-VOTE-4). Anything else: no."""
    if isinstance(record, CommissarOffer):
        return (record.answered_at is None and record.candidate.user_id == user.pk
                and record.candidate.status == LifeStatus.ALIVE and policies.can_read_inbox(user, record.inbox))
    if isinstance(record, ProxyRequest):
        return record.state == ProxyState.REQUESTED and policies.holds_city_role(user, record.game_id, record.city_id)
    return False


OFFER_TEXT = gettext_lazy("%(game)s: you are offered the commissar's post: answer the offer.")
PROXY_TEXT = gettext_lazy("%(game)s: %(name)s asks for a proxy vote.")


def record_notification_text(notification) -> str:
    """The line of a notification of an offer or a proxy request, in the active language."""
    record, title = notification.record, notification.game.title
    if isinstance(record, CommissarOffer):
        return str(OFFER_TEXT) % {"game": title}
    if isinstance(record, ProxyRequest):
        return str(PROXY_TEXT) % {"game": title, "name": record.resident.name}
    return ""


def record_notification_url(notification) -> str:
    """Where a notification of an offer (its page) or a proxy request (its city's day) leads."""
    record, slug = notification.record, notification.game.slug
    if isinstance(record, CommissarOffer):
        return reverse("commissar_offer", args=[slug, record.public_id])
    if isinstance(record, ProxyRequest):
        return reverse("city_day", args=[slug, record.city.number])
    return ""


def timeline_records(game) -> dict[str, dict]:
    """The voting sessions and court cases of ``game`` by id, with their cities, as the archive's timeline names
    them (``voting.opened``/``voting.closed``, ``court.case_opened``)."""
    return {"sessions": {s.pk: s for s in VotingSession.objects.filter(game=game).select_related("city")},
            "cases": {c.pk: c for c in CourtCase.objects.filter(game=game).select_related("city")}}


def attention_items(user, game, seat) -> list[tuple[str, str]]:
    """A commissar offer addressed to ``seat`` and not yet answered (L-COMM; only the candidate learns of it), as
    ``(text, url)`` in the active language."""
    del user
    if seat is None:
        return []
    offer = CommissarOffer.objects.filter(candidate=seat, answered_at__isnull=True).first()
    if offer is None:
        return []
    return [(gettext("You are offered the commissar's post: answer the offer."),
             reverse("commissar_offer", args=[game.slug, offer.public_id]))]


def offer_inbox_ids(inbox_ids) -> set[int]:
    """Of ``inbox_ids``, the commissar offers' inboxes (the site's messages there are the offer, told as one)."""
    return set(CommissarOffer.objects.filter(inbox_id__in=list(inbox_ids)).values_list("inbox_id", flat=True))


def draw_notary_q() -> Q:
    """``Q`` over Inbox: a mafia draw's record (``MafiaDraw.notary``, L-ASSIGN-3)."""
    return Q(Exists(MafiaDraw.objects.filter(notary=OuterRef("pk"))))


def is_draw_notary(inbox) -> bool:
    """The bool form of ``draw_notary_q``."""
    return MafiaDraw.objects.filter(notary=inbox).exists()


def recorded_winner(game) -> str | None:
    """The winner the victory service recorded (``GameResult``; "" for a game ended early); without one (a game
    finished by a bare status change), the winner of its last ``game.finished`` event; else None."""
    result = GameResult.objects.filter(game=game).only("winner").first()
    if result is not None:
        return result.winner
    event = (GameEvent.objects.filter(game=game, kind=LepraEventKind.GAME_FINISHED, payload__has_key="winner")
             .order_by("-at", "-id").first())
    if event is not None and isinstance(event.payload.get("winner"), str):
        return event.payload["winner"]
    return None
