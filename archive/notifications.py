"""Notifications during the game (L-INBOX-20): unread badges, mentions, the e-mail digest, deadline reminders.

Everything is computed per recipient when it is shown or sent: badges and mentions through the policy's query
forms (``readable_inboxes`` / ``readable_messages``), the digest's and the reminders' recipients through
``readers_of_inbox``. A member removed since, a replaced seat, a visitor: none of them is told anything of an
inbox they cannot read now, not even that it has new messages.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from django.contrib.auth import get_user_model
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone as dj_timezone
from django.utils.formats import date_format
from django.utils.translation import gettext_lazy

from cities.models import City, Game, GameStatus, LifeStatus, Resident, ScheduledEvent, StaffKind
from inboxes import policies
from inboxes.models import Inbox, InboxKind, Message
from inboxes.selectors import inbox_list_for
from kernel.site import absolute_url
from roles.models import CommissarOffer
from voting.models import VotingSession

from .models import NotificationSettings

#: Reminded deadlines (ScheduledEvent kinds) and their texts: nominations close when voting opens (L-NOM),
#: voting closes (L-VOTE-8), the night ends (the night issue's kind).
REMINDER_TEXTS = {
    "voting_open": gettext_lazy("%(game)s: nominations close at %(when)s (%(zone)s)."),
    "voting_close": gettext_lazy("%(game)s: voting closes at %(when)s (%(zone)s)."),
    "night_end": gettext_lazy("%(game)s: the night ends at %(when)s (%(zone)s)."),
}


def _games_of(user) -> list[Game]:
    if not getattr(user, "is_authenticated", False):
        return []
    return list(Game.objects.filter(Q(residents__user=user) | Q(staff_roles__user=user)).distinct().order_by("-created_at"))


def unread_badges_for(user) -> list[tuple[Game, int]]:
    """(game, unread messages) for each running game ``user`` plays or hosts, counted over ``readable_inboxes``
    only (``inbox_list_for``): an unread count never comes from an inbox the user cannot read (L-INBOX-20)."""

    badges = []
    for game in _games_of(user):
        if game.status == GameStatus.FINISHED:
            continue
        badges.append((game, sum(i.unread for i in inbox_list_for(user, game))))
    return badges


def mention_names(user) -> list[str]:
    """The names that mention ``user``: ``@`` + display name, username or the name of any seat they hold."""
    names = {user.get_username(), getattr(user, "display_name", "") or ""}
    names |= set(Resident.objects.filter(user=user).values_list("name", flat=True))
    return sorted(n for n in names if n)


def mentions_for(user, limit: int = 50) -> list[Message]:
    """Messages that mention ``user`` (``@name``), newest first, from readable inboxes only (L-INBOX-20);
    hidden messages and the user's own are left out."""
    names = mention_names(user)
    if not names:
        return []
    q = Q()
    for name in names:
        q |= Q(body__icontains=f"@{name}")
    qs = policies.readable_messages(user).filter(q, is_hidden=False).exclude(author_user=user)
    return list(qs.select_related("inbox", "inbox__game").order_by("-received_at", "-id")[:limit])


def digest_plan(now: datetime) -> list[tuple[NotificationSettings, list[str]]]:
    """For each user who asked for the digest: the lines of their digest ("game · inbox: N" and the inbox's
    absolute URL on the next line) covering
    messages received after their last digest (at most one day back) up to ``now``, in running games only.
    Recipients of an inbox = ``readers_of_inbox(inbox)`` computed now. The lines never quote a message."""
    rows = {r.user_id: r for r in NotificationSettings.objects.filter(email_digest=True, user__is_active=True)
            .select_related("user")}
    if not rows:
        return []
    since = {uid: max(r.digest_sent_up_to or now - timedelta(days=1), now - timedelta(days=1)) for uid, r in rows.items()}
    earliest = min(since.values())
    lines: dict[int, list[str]] = {uid: [] for uid in rows}
    inboxes = (Inbox.objects.filter(game__status=GameStatus.RUNNING, messages__received_at__gt=earliest,
                                    messages__received_at__lte=now).distinct().select_related("game")
               .order_by("game_id", "pk"))
    for inbox in inboxes:
        audience = set(policies.readers_of_inbox(inbox).filter(pk__in=list(rows)).values_list("pk", flat=True))
        for uid in sorted(audience):
            count = (Message.objects.filter(inbox=inbox, received_at__gt=since[uid], received_at__lte=now)
                     .exclude(author_user_id=uid).count())
            if count:
                url = absolute_url(reverse("inbox_thread", args=[inbox.pk]))
                lines[uid].append(f"{inbox.game.title} · {inbox.title}: {count}\n  {url}")
    return [(rows[uid], lines[uid]) for uid in rows]


def concerned_users(event: ScheduledEvent) -> list:
    """The users a deadline concerns, each one able to read the inbox where it happens (``readers_of_inbox``):
    for a voting (``voting_open``/``voting_close``), the living residents of its city and its Tribune, among the
    readers of the city's current inbox; for the night's end, the living residents of the game among the readers
    of their city's inbox. Users who turned reminders off are left out."""

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
    off = set(NotificationSettings.objects.filter(user__in=users, reminders=False).values_list("user_id", flat=True))
    return list(User.objects.filter(pk__in=users - off, is_active=True).order_by("pk"))


#: How far ahead of a deadline its reminder goes out.
REMINDER_LEAD = timedelta(hours=1)


def reminder_plan(now: datetime) -> list[tuple[ScheduledEvent, object, str]]:
    """(event, user, kind) for every pending deadline due in (``now``, ``now`` + ``REMINDER_LEAD``] and every user
    it concerns (``concerned_users``). The caller skips pairs already reminded."""
    events = (ScheduledEvent.objects.filter(kind__in=list(REMINDER_TEXTS), done_at__isnull=True, cancelled_at__isnull=True,
                                            due_at__gt=now, due_at__lte=now + REMINDER_LEAD)
              .select_related("game").order_by("due_at", "pk"))
    return [(event, user, event.kind) for event in events for user in concerned_users(event)]


#: How far ahead "for you" lists the deadlines that concern a player.
ATTENTION_LEAD = timedelta(hours=24)


@dataclass
class Attention:
    """One thing that needs ``user`` in a game now: ``text`` (in the active language), where to act (``url``)
    and, for a deadline, when it falls (``due_at``, aware UTC)."""

    text: str
    url: str
    due_at: datetime | None = None


def attention_for(user, game: Game, now: datetime) -> list[Attention]:
    """What needs ``user`` in ``game`` now, decided at this moment from the state of their seat and the policy:
    a commissar offer addressed to their seat and not yet answered (L-COMM-2: only the candidate learns of it),
    then the deadlines of the next ``ATTENTION_LEAD`` that concern them (``concerned_users``: nominations and
    voting close in their city, the night's end), soonest first. Empty for anonymous visitors and finished games.
    """
    if not getattr(user, "is_authenticated", False) or game.status == GameStatus.FINISHED:
        return []
    items: list[Attention] = []
    seat = policies.seat_in(user, game)
    if seat is not None:
        offer = CommissarOffer.objects.filter(candidate=seat, answered_at__isnull=True).first()
        if offer is not None:
            items.append(Attention(str(gettext_lazy("You are offered the commissar's post: answer the offer.")),
                                   reverse("commissar_offer", args=[game.slug, offer.pk])))
    zone = ZoneInfo(game.time_zone)
    events = (ScheduledEvent.objects.filter(game=game, kind__in=list(REMINDER_TEXTS), done_at__isnull=True,
                                            cancelled_at__isnull=True, due_at__gt=now,
                                            due_at__lte=now + ATTENTION_LEAD)
              .select_related("game").order_by("due_at", "pk"))
    for event in events:
        if user.pk not in {u.pk for u in concerned_users(event)}:
            continue
        when = date_format(dj_timezone.localtime(event.due_at, zone), "DATETIME_FORMAT")
        text = str(REMINDER_TEXTS[event.kind]) % {"game": game.title, "when": when, "zone": game.time_zone}
        items.append(Attention(text, reverse("game_detail", args=[game.slug]), event.due_at))
    return items


def attention_everywhere(user, now: datetime) -> list[tuple[Game, list[Attention]]]:
    """``attention_for`` over every running game ``user`` plays or hosts, games with nothing left out."""
    found = []
    for game in _games_of(user):
        items = attention_for(user, game, now)
        if items:
            found.append((game, items))
    return found
