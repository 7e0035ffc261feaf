"""State changes of the archive (L-ARCH) and of notifications (L-INBOX-20).

Disclosure itself is decided by ``inboxes.policies`` (``is_disclosed``, ``_disclosed_q``): these services only
write the rows the policy reads (consents, the logged "open on request" clicks) and send what the policy allows.
"""
from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.formats import date_format
from django.utils.translation import gettext as _

from cities.errors import InvalidInput, NotAllowed, WrongState
from cities.models import Game, GameStatus
from inboxes import policies
from inboxes.models import Inbox
from kernel.audit import record_event
from kernel.site import absolute_url

from .models import DisclosureConsent, NotificationSettings, OpenRequest, ReminderSent
from .notifications import REMINDER_TEXTS, digest_plan, reminder_plan


def consenter_for(user, inbox: Inbox) -> tuple[str, int] | None:
    """Whose consent ``user`` gives for ``inbox``: ("resident", seat id) for the personal inbox's resident or a
    secret inbox's member, ("staff", role id) for a secret inbox's staff organizer; None when ``user`` is none of
    them (L-ARCH-2)."""
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
    """Record ``acting_user``'s consent to disclose ``inbox`` after the game (L-ARCH-2, L-INBOX-5, L-INBOX-13).

    Allowed during and after the game. Idempotent (a revoked consent is given again). Raises ``NotAllowed`` when
    ``acting_user`` is not a consenter of the inbox. When the game is over and this was the last consent
    missing, the inbox is disclosed to everyone at once (the policy reads the row).
    """
    now = now or timezone.now()
    inbox = _lock_inbox(inbox)
    policies.forget_viewer_cache(acting_user)
    who = consenter_for(acting_user, inbox)
    if who is None:
        raise NotAllowed(_("Only the residents of this inbox can consent to its disclosure."), rule="L-ARCH-2")
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
    """Withdraw ``acting_user``'s consent for ``inbox`` (L-ARCH-2: revocable until given, i.e. until the inbox is
    disclosed). Raises ``NotAllowed`` for a non-consenter, ``WrongState`` when there is no consent to withdraw or
    the inbox is already disclosed (what was read cannot be unread)."""
    now = now or timezone.now()
    inbox = _lock_inbox(inbox)
    policies.forget_viewer_cache(acting_user)
    who = consenter_for(acting_user, inbox)
    if who is None:
        raise NotAllowed(_("Only the residents of this inbox can consent to its disclosure."), rule="L-ARCH-2")
    if policies.is_disclosed(inbox):
        raise WrongState(_("This inbox is already disclosed; the consent can no longer be withdrawn."), rule="L-ARCH-2")
    key = {"resident_id": who[1]} if who[0] == "resident" else {"staff_role_id": who[1]}
    consent = DisclosureConsent.objects.select_for_update().filter(inbox=inbox, revoked_at__isnull=True, **key).first()
    if consent is None:
        raise WrongState(_("You have not consented to disclose this inbox."), rule="L-ARCH-2")
    consent.revoked_at = now
    consent.save(update_fields=["revoked_at"])
    record_event(inbox.game, "archive.consent_revoked", actor=acting_user, at=now, payload={"inbox": inbox.pk, who[0]: who[1]})
    return consent


@transaction.atomic
def do_request_open(inbox: Inbox, *, acting_user, now: datetime | None = None) -> OpenRequest:
    """The one logged click that opens an "open to anyone who asks" inbox (mafia, office, bar) to a logged-in user
    after the game (L-ARCH-1). Idempotent: a second click keeps the first row. Logged as an ``OpenRequest`` row
    and an ``archive.open_request`` GameEvent. Raises ``NotAllowed`` for a visitor, ``WrongState`` before the
    end or for another kind."""
    now = now or timezone.now()
    if not getattr(acting_user, "is_authenticated", False):
        raise NotAllowed(_("Log in to open this inbox."), rule="L-ARCH-1")
    inbox = _lock_inbox(inbox)
    if not policies.can_request_inbox(acting_user, inbox):
        raise WrongState(_("This inbox cannot be opened on request."), rule="L-ARCH-1")
    request, created = OpenRequest.objects.get_or_create(inbox=inbox, user=acting_user, defaults={"at": now})
    if created:
        record_event(inbox.game, "archive.open_request", actor=acting_user, at=now, payload={"inbox": inbox.pk})
    return request


# --------------------------------------------------------------------------------------------------------------
# Notifications (L-INBOX-20): per recipient, through readers_of_inbox, when sending
# --------------------------------------------------------------------------------------------------------------

def settings_of(user) -> NotificationSettings:
    """The notification settings of ``user``; when they never chose, unsaved defaults whose time zone is that of
    the latest game they play or host (Europe/Moscow when they have none)."""
    found = NotificationSettings.objects.filter(user=user).first()
    return found or NotificationSettings(user=user, time_zone=_home_zone(user))


def _home_zone(user) -> str:
    """The time zone of the latest game ``user`` has a seat or a staff role in; Europe/Moscow when none."""

    latest = (Game.objects.filter(Q(residents__user=user) | Q(staff_roles__user=user))
              .order_by("-created_at", "-pk").values_list("time_zone", flat=True).first())
    return latest or "Europe/Moscow"


@transaction.atomic
def do_update_notification_settings(*, acting_user, time_zone: str, email_digest: bool, reminders: bool,
                                    now: datetime | None = None) -> NotificationSettings:
    """Save ``acting_user``'s own notification settings. Raises ``InvalidInput`` for an unknown IANA zone."""
    try:
        ZoneInfo(time_zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidInput(_("Unknown time zone.")) from None
    row, _created = NotificationSettings.objects.select_for_update().get_or_create(user=acting_user)
    row.time_zone, row.email_digest, row.reminders = time_zone, email_digest, reminders
    row.save(update_fields=["time_zone", "email_digest", "reminders"])
    return row


def do_send_digests(*, acting_user=None, now: datetime | None = None) -> int:
    """E-mail each user who asked for it the inboxes with messages new since their last digest (L-INBOX-20).

    For every inbox with new messages, the audience is ``readers_of_inbox(inbox)`` computed now: a member removed
    since, or a seat replaced, gets nothing; a mafia inbox never reaches a non-member. The mail names inboxes and
    counts, never message text. Returns the number of e-mails sent. Scheduler only (``acting_user`` None).
    """

    now = now or timezone.now()
    sent = 0
    for row, lines in digest_plan(now):
        with transaction.atomic():
            locked = NotificationSettings.objects.select_for_update().get(pk=row.pk)
            if locked.digest_sent_up_to is not None and locked.digest_sent_up_to >= now:
                continue
            if lines:
                with translation.override(settings.LANGUAGE_CODE):
                    body = "\n".join(lines) + "\n\n" + _("Notification settings: %(url)s") % {
                        "url": absolute_url(reverse("archive_notification_settings"))}
                    send_mail(_("Mafia Host: new messages"), body, None, [row.user.email])
                sent += 1
            locked.digest_sent_up_to = now
            locked.save(update_fields=["digest_sent_up_to"])
    return sent


def do_send_reminders(*, acting_user=None, now: datetime | None = None) -> int:
    """Send each concerned user one reminder of every deadline due within ``notifications.REMINDER_LEAD`` of ``now`` (nominations
    close, voting close, night end), the time written in the user's own time zone. Recipients come from
    ``notifications.concerned_users`` (through ``readers_of_inbox``). Returns the number of reminders sent; a
    second tick sends none (``ReminderSent``). Scheduler only."""

    now = now or timezone.now()
    sent = 0

    for event, user, kind in reminder_plan(now):
        with transaction.atomic():
            _row, created = ReminderSent.objects.get_or_create(user=user, event=event, defaults={"sent_at": now})
            if not created:
                continue
            zone = ZoneInfo(settings_of(user).time_zone)
            with translation.override(event.game.language):
                when = date_format(timezone.localtime(event.due_at, zone), "DATETIME_FORMAT")
                body = str(REMINDER_TEXTS[kind]) % {"game": event.game.title, "when": when, "zone": str(zone)}
                body += "\n" + absolute_url(reverse("game_detail", args=[event.game.slug]))
                send_mail(_("Mafia Host: a deadline is near"), body, None, [user.email])
            record_event(event.game, "archive.reminder", actor=None, at=now, payload={"event": event.pk, "user": user.pk})
            sent += 1
    return sent


def game_is_over(game) -> bool:
    """True when ``game`` is finished (the archive's front page and cast list exist only then, L-ARCH-3)."""
    return game.status == GameStatus.FINISHED
