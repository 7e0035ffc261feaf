"""Notifications during the game: unread badges, mentions, "for you", and the notifications of each
kind (``NotificationKind``: mentions, new messages in your inboxes, deadlines, night results, offers and requests).

Everything is decided per recipient by the policy, twice: when a notification is written (the audience of a
message is ``readers_of_inbox`` narrowed by ``readable_messages``, which freezes a dead seat's knowledge; a deadline's
is ``concerned_users``; of a ruleset's own record, whom the ruleset names) and again when it is shown or e-mailed
(``still_allowed``). A member removed since, a dead seat, the old account of a replaced seat, a visitor: none of
them is told anything of an inbox they cannot read at that moment, not even that it has new messages.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.contrib.contenttypes.prefetch import GenericPrefetch
from django.db.models import Q
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext_lazy

from cities.models import Game, GameStatus, Resident, ScheduledEvent
from inboxes import policies
from inboxes.models import Message
from inboxes.selectors import inbox_list_for
from kernel.rulesets import registered_rulesets, ruleset_of
from kernel.timezones import display_zone_name, zoned_date, zoned_time

from .models import Notification, NotificationKind


def reminded_kinds_q() -> Q:
    """``Q`` over ScheduledEvent: the deadlines some ruleset reminds of (``RulesetSpec.reminder_texts``), each
    only in that ruleset's games."""
    q = Q(pk__in=[])
    for key, spec in registered_rulesets().items():
        if spec.reminder_texts:
            q |= Q(game__ruleset=key, kind__in=list(spec.reminder_texts))
    return q


def reminder_text(event: ScheduledEvent, zone: str) -> str:
    """The reminder of the approaching ``event`` in its ruleset's wording and the active language, its time written
    in ``zone``. Raises ``KeyError`` for a kind its ruleset does not remind of."""
    text = ruleset_of(event.game).reminder_texts[event.kind]
    # The date and the time are separate placeholders too: a language puts its own words between them
    # («6 декабря в 18:00»); ``when`` is both in the engine's format.
    return str(text) % {"game": event.game.title, "when": zoned_time(event.due_at, zone),
                        "date": zoned_date(event.due_at, zone), "time": zoned_time(event.due_at, zone, "TIME_FORMAT"),
                        "zone": zone}


def _games_of(user) -> list[Game]:
    if not getattr(user, "is_authenticated", False):
        return []
    return list(Game.objects.filter(Q(residents__user=user) | Q(staff_roles__user=user)).distinct().order_by("-created_at"))


def unread_badges_for(user) -> list[tuple[Game, int]]:
    """(game, unread messages) for each running game ``user`` plays or hosts, counted over ``readable_inboxes``
    only (``inbox_list_for``): an unread count never comes from an inbox the user cannot read."""

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
    """Messages that mention ``user`` (``@name``), newest first, from readable inboxes only;
    hidden messages and the user's own are left out."""
    names = mention_names(user)
    if not names:
        return []
    q = Q()
    for name in names:
        q |= Q(body__icontains=f"@{name}")
    qs = policies.readable_messages(user).filter(q, is_hidden=False).exclude(author_user=user)
    return list(qs.select_related("inbox", "inbox__game").order_by("-received_at", "-id")[:limit])


def concerned_users(event: ScheduledEvent) -> list:
    """The active users the deadline ``event`` concerns, as its ruleset says (``RulesetSpec.reminder_audience``),
    ordered by id. The person's notification choices are not looked at here."""
    ids = {getattr(u, "pk", u) for u in ruleset_of(event.game).reminder_audience(event)}
    return list(get_user_model().objects.filter(pk__in=ids, is_active=True).order_by("pk"))


#: How far ahead of a deadline its reminder goes out.
REMINDER_LEAD = timedelta(hours=1)


def due_deadlines(now: datetime) -> list[ScheduledEvent]:
    """Pending deadlines (``reminded_kinds_q``) of running games due in (``now``, ``now`` + ``REMINDER_LEAD``]."""
    return list(ScheduledEvent.objects.filter(reminded_kinds_q(), done_at__isnull=True,
                                              cancelled_at__isnull=True, due_at__gt=now,
                                              due_at__lte=now + REMINDER_LEAD, game__status=GameStatus.RUNNING)
                .select_related("game").order_by("due_at", "pk"))


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
    what their seat must answer now (the ruleset's ``attention_items``: a commissar offer, say, only its candidate
    learns of it), then the deadlines of the next ``ATTENTION_LEAD`` that concern them (``concerned_users``: nominations and
    voting close in their city, the night's end), soonest first. Empty for anonymous visitors and finished games.
    """
    if not getattr(user, "is_authenticated", False) or game.status == GameStatus.FINISHED:
        return []
    items: list[Attention] = []
    seat = policies.seat_in(user, game)
    if seat is not None:
        items += [Attention(text, url) for text, url in ruleset_of(game).attention_items(user, game, seat)]
    zone = display_zone_name(user, game)
    events = (ScheduledEvent.objects.filter(reminded_kinds_q(), game=game, done_at__isnull=True,
                                            cancelled_at__isnull=True, due_at__gt=now,
                                            due_at__lte=now + ATTENTION_LEAD)
              .select_related("game").order_by("due_at", "pk"))
    for event in events:
        if user.pk not in {u.pk for u in concerned_users(event)}:
            continue
        text = reminder_text(event, zone)
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


# --------------------------------------------------------------------------------------------------------------
# Notifications of each kind: who is told (the policy at writing time), whether they still may be (at send time)
# --------------------------------------------------------------------------------------------------------------

def _is_site_message(message: Message) -> bool:
    return message.author_user_id is None and message.author_staff_id is None and message.author_resident_id is None


def _names_in_game(game_id: int) -> dict[str, set[int]]:
    """``@``-name (case-folded) -> the users it mentions in one game: each seat's name (its current account), and
    the display name and username of every account with a seat or a role there."""
    User = get_user_model()
    names: dict[str, set[int]] = {}
    for name, user_id in Resident.objects.filter(game_id=game_id, user__isnull=False).values_list("name", "user_id"):
        names.setdefault(name.casefold(), set()).add(user_id)
    for user in User.objects.filter(Q(seats__game_id=game_id) | Q(staff_roles__game_id=game_id)).distinct():
        for name in (user.get_username(), user.display_name):
            if name:
                names.setdefault(name.casefold(), set()).add(user.pk)
    return names


def message_audience(messages: list[Message]) -> list[tuple[int, str, Message]]:
    """``(user id, kind, message)`` for every person ``messages`` (not hidden) should be told of,
    decided now by the policy: the users a message mentions (``@name``) and, in the inboxes whose kind the game's
    ruleset has its readers notified of (``RulesetSpec.reader_notified_inbox_kinds``), every reader
    (``readers_of_inbox``), each kept only when ``readable_messages`` gives them the message (a dead
    seat learns nothing posted after its death). The author is never told of their own message. A mention wins
    over a new message; a site message in the ruleset's ``night_result_inbox_kinds`` is a night result; the site's messages in a
    commissar offer's inbox are left to the offer's own notification."""
    plans: list[tuple[int, str, Message]] = []
    by_inbox: dict[int, list[Message]] = {}
    for m in messages:
        by_inbox.setdefault(m.inbox_id, []).append(m)
    names_of_game: dict[int, dict[str, set[int]]] = {}
    User = get_user_model()
    # The site's own messages in an inbox a ruleset tells itself (a commissar offer's inbox) are told there.
    self_told = set()
    for spec in registered_rulesets().values():
        self_told |= spec.self_told_inbox_ids(list(by_inbox))
    for batch in by_inbox.values():
        inbox = batch[0].inbox
        if inbox.pk in self_told:
            batch = [m for m in batch if not _is_site_message(m)]
            if not batch:
                continue
        if inbox.game_id not in names_of_game:
            names_of_game[inbox.game_id] = _names_in_game(inbox.game_id)
        names = names_of_game[inbox.game_id]
        wanted: dict[int, dict[int, str]] = {}  # user id -> message id -> kind
        spec = ruleset_of(inbox.game)  # which kinds notify their readers, and which hold night results
        readers = (set(policies.readers_of_inbox(inbox).values_list("pk", flat=True))
                   if inbox.kind in spec.reader_notified_inbox_kinds else set())
        for m in batch:
            body = m.body.casefold()
            mentioned = {uid for name, uids in names.items() if f"@{name}" in body for uid in uids}
            for uid in mentioned | readers:
                if uid == m.author_user_id:
                    continue
                if uid in mentioned:
                    kind = NotificationKind.MENTION
                elif _is_site_message(m) and inbox.kind in spec.night_result_inbox_kinds:
                    kind = NotificationKind.NIGHT_RESULT
                else:
                    kind = NotificationKind.REPLY
                wanted.setdefault(uid, {})[m.pk] = kind
        for user in User.objects.filter(pk__in=list(wanted), is_active=True):
            readable = set(policies.readable_messages(user).filter(pk__in=list(wanted[user.pk]))
                           .values_list("pk", flat=True))
            plans += [(user.pk, wanted[user.pk][m.pk], m) for m in batch if m.pk in readable]
    return plans


def record_prefetch() -> GenericPrefetch:
    """The prefetch of the notifications' records (``Notification.record``) through the querysets each
    registered ruleset gives (``record_notification_querysets``)."""
    return GenericPrefetch("record", [qs for spec in registered_rulesets().values()
                                      for qs in spec.record_notification_querysets()])


def still_allowed(notification: Notification) -> bool:
    """Whether the policy lets ``notification.user`` be told of it now (shown on the site or e-mailed): the
    message is one ``readable_messages`` gives them and not hidden; the deadline is pending and concerns them
    (``concerned_users``); the ruleset's own record is one its ``record_still_allowed`` still tells them of."""
    user = notification.user
    if not user.is_active:
        return False
    if notification.message_id is not None:
        return policies.readable_messages(user).filter(pk=notification.message_id, is_hidden=False).exists()
    if notification.event_id is not None:
        event = notification.event
        return (event.done_at is None and event.cancelled_at is None
                and user.pk in {u.pk for u in concerned_users(event)})
    if notification.record_type_id is not None:
        record = notification.record
        return record is not None and ruleset_of(notification.game).record_still_allowed(user, record)
    return False


#: The line of each kind (the game's language); ``%(inbox)s`` is the inbox's title, readable by the recipient.
NOTIFICATION_TEXTS = {
    NotificationKind.MENTION: gettext_lazy("%(game)s: you are mentioned in “%(inbox)s”."),
    NotificationKind.REPLY: gettext_lazy("%(game)s: a new message in “%(inbox)s”."),
    NotificationKind.NIGHT_RESULT: gettext_lazy("%(game)s: your night result in “%(inbox)s”."),
}


def notification_text(notification: Notification, zone: str) -> str:
    """What ``notification`` says, in the active language, a time written in ``zone`` with its abbreviation."""
    game = notification.game
    if notification.message_id is not None:  # the game's ruleset may word a kind, or a site message, its own way
        message = notification.message
        spec = ruleset_of(game)
        text = spec.site_message_notice(notification.kind, message.body) if _is_site_message(message) else None
        text = text or spec.wording(f"notification_{notification.kind}", NOTIFICATION_TEXTS[notification.kind])
        return str(text) % {"game": game.title, "inbox": message.inbox.title}
    if notification.event_id is not None:
        event = notification.event
        return reminder_text(event, zone)
    return ruleset_of(game).record_notification_text(notification)  # a ruleset's own record: its words


def notification_path(notification: Notification) -> str:
    """Where ``notification`` leads (a site path): the message's inbox; a ruleset's own record where the ruleset
    says (``record_notification_url``); otherwise the game."""
    if notification.message_id is not None:
        return reverse("inbox_thread", args=[notification.message.inbox.public_id])
    if notification.record_type_id is not None:
        url = ruleset_of(notification.game).record_notification_url(notification)
        if url:
            return url
    return reverse("game_detail", args=[notification.game.slug])


@dataclass
class ShownNotification:
    """A notification as a page shows it: ``text``, ``url``, when (``at``, aware UTC) and whether it was read."""

    notification: Notification
    text: str
    url: str
    at: datetime
    unread: bool


def notification_list_for(user, limit: int = 50) -> list[ShownNotification]:
    """The newest ``limit`` notifications of ``user`` that the policy still lets them see (``still_allowed``),
    newest first, texts in each game's language and times in the user's display zone."""
    if not getattr(user, "is_authenticated", False):
        return []
    rows = (Notification.objects.filter(user=user, withheld_at__isnull=True)
            .select_related("user", "game", "message__inbox", "event").prefetch_related(record_prefetch())
            .order_by("-created_at", "-pk")[:limit])
    shown = []
    for n in rows:
        if not still_allowed(n):
            continue
        with translation.override(n.game.language):
            text = notification_text(n, display_zone_name(user, n.game))
        shown.append(ShownNotification(n, text, notification_path(n), n.created_at, n.read_at is None))
    return shown
