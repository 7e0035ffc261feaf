"""State changes of the archive and of notifications.

Disclosure itself is decided by ``inboxes.policies`` (``is_disclosed``, ``_disclosed_q``): these services only
write the rows the policy reads (consents, the logged "open on request" clicks) and send what the policy allows.
"""
from __future__ import annotations

from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from cities.models import GameStatus
from inboxes import policies, viewer_reads
from inboxes.models import Inbox, Message
from kernel.audit import record_event
from kernel.errors import InvalidInput, NotAllowed, WrongState
from kernel.rulesets import registered_rulesets, rule_id
from kernel.site import absolute_url
from kernel.timezones import display_zone_name, time_zone_names

from .models import (
    Channel,
    DisclosureConsent,
    Notification,
    NotificationCursor,
    NotificationKind,
    NotificationSettings,
    OpenRequest,
)
from .notifications import (
    concerned_users,
    due_deadlines,
    message_audience,
    notification_path,
    notification_text,
    record_prefetch,
    still_allowed,
)


def consenter_for(user, inbox: Inbox) -> tuple[str, int] | None:
    """Whose consent ``user`` gives for ``inbox``: ("resident", seat id) for the personal inbox's resident or a
    secret inbox's member, ("staff", role id) for a secret inbox's staff organizer; None when ``user`` is none of
    them."""
    if not getattr(user, "is_authenticated", False):
        return None
    residents, role = policies.consenters_of(inbox)
    seat = policies.seat_in(user, inbox.game_id)
    if seat is not None and seat.pk in residents:
        return ("resident", seat.pk)
    if role is not None and any(r.pk == role for r in policies.staff_roles_in(user, inbox.game_id)):
        return ("staff", role)
    return None


def _lock_inbox(inbox: Inbox) -> Inbox:
    return Inbox.objects.select_for_update(of=("self",)).select_related("game").get(pk=inbox.pk)


@transaction.atomic
def do_give_consent(inbox: Inbox, *, acting_user, now: datetime | None = None) -> DisclosureConsent:
    """Record ``acting_user``'s consent to disclose ``inbox`` after the game.

    Allowed during and after the game. Idempotent (a revoked consent is given again). Raises ``NotAllowed`` when
    ``acting_user`` is not a consenter of the inbox. When the game is over and this was the last consent
    missing, the inbox is disclosed to everyone at once (the policy reads the row).
    """
    now = now or timezone.now()
    inbox = _lock_inbox(inbox)
    viewer_reads.forget_viewer_cache(acting_user)
    who = consenter_for(acting_user, inbox)
    if who is None:
        raise NotAllowed(_("Only the residents of this inbox can consent to its disclosure."),
                         rule=rule_id(inbox.game, "disclosure_consent"))
    key = {"resident_id": who[1]} if who[0] == "resident" else {"staff_role_id": who[1]}
    consent = DisclosureConsent.objects.select_for_update().filter(inbox=inbox, **key).first()
    if consent is None:
        consent = DisclosureConsent.objects.create(inbox=inbox, given_by=acting_user, given_at=now, **key)
    elif consent.revoked_at is not None:
        consent.revoked_at = None
        consent.given_at = now
        consent.given_by = acting_user
        consent.save(update_fields=["revoked_at", "given_at", "given_by"])
    record_event(inbox.game, "archive.consent_given", actor=acting_user, at=now,
                 payload={"inbox": inbox.pk, who[0]: who[1], "disclosed": policies.is_disclosed(inbox)})
    return consent


@transaction.atomic
def do_revoke_consent(inbox: Inbox, *, acting_user, now: datetime | None = None) -> DisclosureConsent:
    """Withdraw ``acting_user``'s consent for ``inbox`` (revocable until given, i.e. until the inbox is
    disclosed). Raises ``NotAllowed`` for a non-consenter, ``WrongState`` when there is no consent to withdraw or
    the inbox is already disclosed (what was read cannot be unread)."""
    now = now or timezone.now()
    inbox = _lock_inbox(inbox)
    viewer_reads.forget_viewer_cache(acting_user)
    who = consenter_for(acting_user, inbox)
    if who is None:
        raise NotAllowed(_("Only the residents of this inbox can consent to its disclosure."),
                         rule=rule_id(inbox.game, "disclosure_consent"))
    if policies.is_disclosed(inbox):
        raise WrongState(_("This inbox is already disclosed; the consent can no longer be withdrawn."),
                         rule=rule_id(inbox.game, "disclosure_consent"))
    key = {"resident_id": who[1]} if who[0] == "resident" else {"staff_role_id": who[1]}
    consent = DisclosureConsent.objects.select_for_update().filter(inbox=inbox, revoked_at__isnull=True, **key).first()
    if consent is None:
        raise WrongState(_("You have not consented to disclose this inbox."),
                         rule=rule_id(inbox.game, "disclosure_consent"))
    consent.revoked_at = now
    consent.save(update_fields=["revoked_at"])
    record_event(inbox.game, "archive.consent_revoked", actor=acting_user, at=now, payload={"inbox": inbox.pk, who[0]: who[1]})
    return consent


@transaction.atomic
def do_request_open(inbox: Inbox, *, acting_user, now: datetime | None = None) -> OpenRequest:
    """The one logged click that opens an "open to anyone who asks" inbox (mafia, office, bar) to a logged-in user
    after the game. Idempotent: a second click keeps the first row. Logged as an ``OpenRequest`` row
    and an ``archive.open_request`` GameEvent. Raises ``NotAllowed`` for a visitor, ``WrongState`` before the
    end or for another kind."""
    now = now or timezone.now()
    if not getattr(acting_user, "is_authenticated", False):
        raise NotAllowed(_("Log in to open this inbox."), rule=rule_id(inbox.game, "open_on_request"))
    inbox = _lock_inbox(inbox)
    if not policies.can_request_inbox(acting_user, inbox):
        raise WrongState(_("This inbox cannot be opened on request."), rule=rule_id(inbox.game, "open_on_request"))
    request, created = OpenRequest.objects.get_or_create(inbox=inbox, user=acting_user, defaults={"at": now})
    if created:
        record_event(inbox.game, "archive.open_request", actor=acting_user, at=now, payload={"inbox": inbox.pk})
    return request


# --------------------------------------------------------------------------------------------------------------
# Notifications: written for the audience the policy allows, sent only if it still allows
# --------------------------------------------------------------------------------------------------------------

def settings_of(user) -> NotificationSettings:
    """The notification settings of ``user``; unsaved defaults (``DEFAULT_CHANNELS``) when they never chose."""
    found = NotificationSettings.objects.filter(user=user).first()
    return found or NotificationSettings(user=user)


@transaction.atomic
def do_update_notification_settings(*, acting_user, time_zone: str = "", channels: dict[str, str] | None = None,
                                    now: datetime | None = None) -> NotificationSettings:
    """Save ``acting_user``'s own choices: their display zone (``User.time_zone``; "" = each game's zone) and a
    ``Channel`` per ``NotificationKind`` in ``channels`` (kinds left out keep theirs). Raises ``InvalidInput`` for
    an unknown IANA zone, kind or channel."""
    if time_zone and time_zone not in time_zone_names():
        raise InvalidInput(_("Unknown time zone."))
    channels = channels or {}
    if set(channels) - set(NotificationKind.values) or set(channels.values()) - set(Channel.values):
        raise InvalidInput(_("Unknown notification choice."))
    user = get_user_model().objects.select_for_update().get(pk=acting_user.pk)
    if user.time_zone != time_zone:
        user.time_zone = time_zone
        user.save(update_fields=["time_zone"])
        acting_user.time_zone = time_zone
    row, _created = NotificationSettings.objects.select_for_update().get_or_create(user=acting_user)
    for kind, channel in channels.items():
        setattr(row, kind, channel)
    row.save()
    return row


#: Games whose records notify (an offer comes during the setup).
LIVE_STATUSES = (GameStatus.SETUP, GameStatus.RUNNING)
#: How far before the cursor each collection re-reads (a message committed late is still seen; rows are unique).
COLLECT_OVERLAP = timedelta(minutes=5)
#: How far back the first collection reads.
COLLECT_FIRST = timedelta(hours=1)


def do_collect_notifications(*, acting_user=None, now: datetime | None = None) -> int:
    """Write the notifications of what happened since the last collection, for the audience the
    policy allows now (``notifications.message_audience``; those a ruleset's own records concern, named by the
    ruleset (``RulesetSpec.record_notifications``); each
    due deadline's ``concerned_users``), leaving out every kind a person turned off. Idempotent: a source
    notifies a person once (unique rows). Returns the number of rows written. Scheduler only."""
    now = now or timezone.now()
    with transaction.atomic():
        cursor, _created = NotificationCursor.objects.select_for_update().get_or_create(
            name="records", defaults={"up_to": now - COLLECT_FIRST})
        since = cursor.up_to - COLLECT_OVERLAP
        messages = list(Message.objects.filter(received_at__gt=since, received_at__lte=now, is_hidden=False,
                                               inbox__game__status__in=LIVE_STATUSES)
                        .select_related("inbox", "inbox__game").order_by("received_at", "pk"))
        planned = [(uid, kind, {"message": m, "game_id": m.inbox.game_id})
                   for uid, kind, m in message_audience(messages)]
        for spec in registered_rulesets().values():  # what each ruleset's own records tell
            planned += spec.record_notifications(since=since, now=now, live_statuses=LIVE_STATUSES)
        for event in due_deadlines(now):
            planned += [(u.pk, NotificationKind.DEADLINE, {"event": event, "game_id": event.game_id})
                        for u in concerned_users(event)]
        choices = {r.user_id: r for r in NotificationSettings.objects.filter(user_id__in={p[0] for p in planned})}
        rows = [Notification(user_id=uid, kind=kind, created_at=now, **source) for uid, kind, source in planned
                if (choices.get(uid) or NotificationSettings()).channel(kind) != Channel.OFF]
        before = Notification.objects.count()
        Notification.objects.bulk_create(rows, ignore_conflicts=True)
        cursor.up_to = max(cursor.up_to, now)
        cursor.save(update_fields=["up_to"])
        return Notification.objects.count() - before


#: How long a notification waits for an e-mail before it is only on the site.
EMAIL_WITHIN = timedelta(days=2)
_DIGEST_EVERY = {Channel.DIGEST_HOURLY: ("hourly_digest_at", timedelta(hours=1)),
                 Channel.DIGEST_DAILY: ("daily_digest_at", timedelta(days=1))}


def _due_rows(row: NotificationSettings, pending: list[Notification], now: datetime) -> tuple[list, list[str]]:
    """The pending notifications whose e-mail is due now for one person, and the digest stamps to move."""
    due, stamps = [], []
    for n in pending:
        channel = row.channel(n.kind)
        if channel == Channel.EMAIL_NOW:
            due.append(n)
        elif channel in _DIGEST_EVERY:
            stamp, every = _DIGEST_EVERY[channel]
            last = getattr(row, stamp)
            if last is None or last <= now - every:
                due.append(n)
                stamps.append(stamp)
    return due, sorted(set(stamps))


def do_send_notifications(*, acting_user=None, now: datetime | None = None) -> int:
    """Collect (``do_collect_notifications``), then e-mail each person what is due for them: the
    kinds they receive by e-mail at once, and their hourly or daily digest when its hour or day has passed. Each
    notification is checked against the policy at this moment (``still_allowed``): a reader removed, dead (for
    what was posted after the death), or replaced (the old account) since gets nothing and the row is withheld
    for good. One e-mail per person and run, every line with its link, times in the person's display zone;
    messages are never quoted. Returns the number of e-mails sent. Scheduler only (``acting_user`` None)."""
    now = now or timezone.now()
    do_collect_notifications(now=now)
    pending = (Notification.objects.filter(emailed_at__isnull=True, withheld_at__isnull=True, read_at__isnull=True,
                                           created_at__gt=now - EMAIL_WITHIN, game__status__in=LIVE_STATUSES)
               .select_related("user", "game", "message__inbox", "event").prefetch_related(record_prefetch())
               .order_by("user_id", "created_at", "pk"))
    by_user: dict[int, list[Notification]] = {}
    for n in pending:
        by_user.setdefault(n.user_id, []).append(n)
    sent = 0
    for user_id, rows in by_user.items():
        with transaction.atomic():
            row, _created = NotificationSettings.objects.select_for_update().get_or_create(user_id=user_id)
            due, stamps = _due_rows(row, rows, now)
            allowed = [n for n in due if still_allowed(n)]
            refused = [n.pk for n in due if n not in allowed]
            Notification.objects.filter(pk__in=refused).update(withheld_at=now)
            if allowed:
                _mail(rows[0].user, allowed)
                Notification.objects.filter(pk__in=[n.pk for n in allowed]).update(emailed_at=now)
                sent += 1
            for stamp in stamps:
                setattr(row, stamp, now)
            if stamps:
                row.save(update_fields=stamps)
    return sent


def _mail(user, rows: list[Notification]) -> None:
    """One e-mail to ``user`` with a line and a link per notification, each in its game's language."""
    lines = []
    for n in rows:
        with translation.override(n.game.language):
            lines.append(notification_text(n, display_zone_name(user, n.game)) + "\n  " + absolute_url(notification_path(n)))
    with translation.override(rows[0].game.language):
        body = "\n".join(lines) + "\n\n" + _("Notification settings: %(url)s") % {
            "url": absolute_url(reverse("archive_notification_settings"))}
        send_mail(_("Mafia Host: notifications"), body, None, [user.email])


def do_send_digests(*, acting_user=None, now: datetime | None = None) -> int:
    """The beat's older name for ``do_send_notifications`` (the digests are part of it). Scheduler only."""
    return do_send_notifications(acting_user=acting_user, now=now)


def do_send_reminders(*, acting_user=None, now: datetime | None = None) -> int:
    """The beat's older name for ``do_send_notifications`` (deadline reminders are notifications of the kind
    ``deadline``). Scheduler only."""
    return do_send_notifications(acting_user=acting_user, now=now)


@transaction.atomic
def do_mark_notifications_read(notifications, *, acting_user, now: datetime | None = None) -> int:
    """Mark ``acting_user``'s own ``notifications`` (ids or rows; None: all of them) read; others' are left alone.
    Returns how many."""
    now = now or timezone.now()
    rows = Notification.objects.filter(user=acting_user, read_at__isnull=True)
    if notifications is not None:
        rows = rows.filter(pk__in=[getattr(n, "pk", n) for n in notifications])
    return rows.update(read_at=now)


def game_is_over(game) -> bool:
    """True when ``game`` is finished (the archive's front page and cast list exist only then)."""
    return game.status == GameStatus.FINISHED
