"""Inboxes (permissioned threads), memberships, messages and their revisions, read marks.

Read these tables only through ``inboxes.policies`` and ``inboxes.selectors``; write them only through
``inboxes.services``.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from cities.models import City, Game, Resident, StaffRole
from kernel.live import ReaderRowsQuerySet, field_values, note_new_messages, track_inboxes, track_reader_rows
from kernel.public_ids import PublicIdField
from kernel.rulesets import known_inbox_kind_choices


class DeathCause(models.TextChoices):
    """Why a resident died. Stored in the ``resident.died`` GameEvent payload."""

    KILLED = "killed", _("killed")
    EXECUTED = "executed", _("executed")
    SUICIDE = "suicide", _("suicide")
    PENALTY = "penalty", _("penalty")


class Inbox(models.Model):
    """A permissioned message thread.

    ``city`` is set for per-city kinds. ``organizer`` is the staff role that runs the inbox (None for inboxes
    organised by a resident, ``organizer_resident``, or by the site). ``resident`` is the resident the inbox is
    about: the owner of a personal inbox, the nominee of a voting inbox, the candidate of a precinct.
    ``killed_at`` closes the inbox to posting; ``predecessor`` links a rollover (the
    successor is ``inbox.successor``), and ``rolled_over_at`` marks the old inbox of a rollover (everyone banned
    there). A ruleset's own rules on its kinds' rows (one current inbox of a kind per resident or city, the kinds
    that need a city) are installed on this table by the ruleset's migrations, never named here.
    """

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="inboxes", verbose_name=_("game"))
    #: A kind some ruleset defines (``RulesetSpec.inbox_kind_choices``); the choices are read from the registry.
    kind = models.CharField(max_length=12, choices=known_inbox_kind_choices, verbose_name=_("kind"))
    city = models.ForeignKey(City, null=True, blank=True, on_delete=models.CASCADE, related_name="inboxes",
        verbose_name=_("city"))
    title = models.CharField(_("title"), max_length=200)
    organizer = models.ForeignKey(StaffRole, null=True, blank=True, on_delete=models.PROTECT, related_name="organized_inboxes",
        verbose_name=_("organizer"))
    organizer_resident = models.ForeignKey(Resident, null=True, blank=True, on_delete=models.PROTECT, related_name="organized_inboxes",
        verbose_name=_("organizer resident"))
    resident = models.ForeignKey(Resident, null=True, blank=True, on_delete=models.PROTECT, related_name="about_inboxes",
        verbose_name=_("resident"))
    day_number = models.PositiveSmallIntegerField(default=0, verbose_name=_("day number"))
    created_at = models.DateTimeField(verbose_name=_("created at"))
    killed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("killed at"))
    predecessor = models.OneToOneField("self", null=True, blank=True, on_delete=models.PROTECT, related_name="successor",
        verbose_name=_("predecessor"))
    rolled_over_at = models.DateTimeField(null=True, blank=True, verbose_name=_("rolled over at"))
    public_id = PublicIdField()
    #: The key of the form submission that created it (a secret inbox): a re-submission returns this inbox.
    idempotency_key = models.CharField(max_length=40, null=True, blank=True, editable=False,
                                       verbose_name=_("idempotency key"))

    class Meta:
        verbose_name = _("inbox")
        verbose_name_plural = _("inboxes")
        ordering = ["-game_id", "kind", "city_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["game", "idempotency_key"], condition=Q(idempotency_key__isnull=False),
                                    name="inbox_one_per_idempotency_key"),
        ]
        indexes = [models.Index(fields=["game", "kind"], name="inbox_game_kind_idx")]

    def __str__(self) -> str:
        return self.title

    @property
    def is_open(self) -> bool:
        """True while the inbox accepts posts: not killed and not rolled over into a successor."""
        return self.killed_at is None and self.rolled_over_at is None


class MembershipState(models.TextChoices):
    """Membership states: member reads and posts, banned reads only, removed sees nothing."""

    MEMBER = "member", _("member")
    BANNED = "banned", _("banned")
    REMOVED = "removed", _("removed")


class Membership(models.Model):
    """A resident's place in an inbox. Staff access comes from their role, not from this table.

    A ban may have an end (``banned_until``, aware UTC): after it the member posts again.
    The seat, not the account, is the member, so a replacement keeps every membership.
    """

    inbox = models.ForeignKey(Inbox, on_delete=models.CASCADE, related_name="memberships", verbose_name=_("inbox"))
    resident = models.ForeignKey(Resident, on_delete=models.CASCADE, related_name="memberships",
        verbose_name=_("resident"))
    state = models.CharField(max_length=8, choices=MembershipState.choices, default=MembershipState.MEMBER,
        verbose_name=_("state"))
    since = models.DateTimeField(verbose_name=_("since"))
    banned_until = models.DateTimeField(null=True, blank=True, verbose_name=_("banned until"))
    reason = models.CharField(max_length=300, blank=True, verbose_name=_("reason"))
    public_id = PublicIdField()

    objects = ReaderRowsQuerySet.as_manager()

    class Meta:
        verbose_name = _("membership")
        verbose_name_plural = _("memberships")
        constraints = [
            models.UniqueConstraint(fields=["inbox", "resident"], name="membership_one_per_inbox_resident"),
            models.CheckConstraint(condition=Q(banned_until__isnull=True) | Q(state="banned"), name="membership_ban_end_only_when_banned"),
        ]
        indexes = [models.Index(fields=["resident", "state"], name="membership_resident_state_idx")]

    def __str__(self) -> str:
        """The seat, its inbox and its state, in the active language (the console's titles and breadcrumbs)."""
        return gettext("%(resident)s in “%(inbox)s”: %(state)s") % {
            "resident": self.resident, "inbox": self.inbox, "state": self.get_state_display()}

    @classmethod
    def live_readers(cls, rows) -> list[tuple[int, int | None]]:
        """Whose reading a change of the memberships ``rows`` (a queryset or instances) changes, as (game id, user
        id): the holder of each membership's seat (the seat is the member: a replacement takes its memberships
        over)."""
        residents = {resident_id for (resident_id,) in field_values(rows, "resident_id")}
        return list(Resident._base_manager.filter(pk__in=residents).values_list("game_id", "user_id"))


class MessageQuerySet(models.QuerySet):
    """Messages; a ``bulk_create`` tells the live polls of the inboxes it adds to (``kernel.live``)."""

    def bulk_create(self, objs, *args, **kwargs):
        objs = list(objs)
        note_new_messages({obj.inbox_id for obj in objs})
        return super().bulk_create(objs, *args, **kwargs)


class Message(models.Model):
    """A post in an inbox. Append-only: an edit adds a ``MessageRevision``; a hide sets a flag.

    ``received_at`` is the server's receive time with microseconds; thread order is (received_at, id).
    The author is a seat (``author_resident``) or a staff role (``author_staff``); ``author_user`` and
    ``author_name`` keep who actually wrote it (posts keep the name of who wrote them).
    """

    inbox = models.ForeignKey(Inbox, on_delete=models.CASCADE, related_name="messages", verbose_name=_("inbox"))
    author_user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        verbose_name=_("author user"))
    author_resident = models.ForeignKey(Resident, null=True, blank=True, on_delete=models.PROTECT, related_name="messages",
        verbose_name=_("author resident"))
    author_staff = models.ForeignKey(StaffRole, null=True, blank=True, on_delete=models.PROTECT, related_name="messages",
        verbose_name=_("author staff"))
    author_name = models.CharField(max_length=100, verbose_name=_("author name"))
    body = models.TextField(verbose_name=_("body"))
    body_html = models.TextField(verbose_name=_("body html"))
    received_at = models.DateTimeField(verbose_name=_("received at"))
    edited_at = models.DateTimeField(null=True, blank=True, verbose_name=_("edited at"))
    is_hidden = models.BooleanField(default=False, verbose_name=_("is hidden"))
    hidden_at = models.DateTimeField(null=True, blank=True, verbose_name=_("hidden at"))
    hidden_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        verbose_name=_("hidden by"))
    public_id = PublicIdField()
    #: The key of the form submission that posted it (``kernel.public_ids.new_idempotency_key``): a re-submission
    #: with the same key returns this message instead of storing another.
    idempotency_key = models.CharField(max_length=40, null=True, blank=True, editable=False,
                                       verbose_name=_("idempotency key"))

    objects = MessageQuerySet.as_manager()

    class Meta:
        verbose_name = _("message")
        verbose_name_plural = _("messages")
        ordering = ["received_at", "id"]
        indexes = [models.Index(fields=["inbox", "received_at", "id"], name="message_inbox_order_idx")]
        constraints = [
            models.CheckConstraint(
                condition=Q(author_resident__isnull=True) | Q(author_staff__isnull=True),
                name="message_one_author_kind",
            ),
            models.UniqueConstraint(fields=["author_user", "idempotency_key"],
                                    condition=Q(idempotency_key__isnull=False), name="message_one_per_idempotency_key"),
        ]

    def __str__(self) -> str:
        """The author and the time received, in the active time zone with its abbreviation (the game's zone on
        the console of one game's staff): "Avrora @ 2026-11-19 14:07:00 MSK"."""
        return f"{self.author_name} @ {timezone.localtime(self.received_at):%Y-%m-%d %H:%M:%S %Z}"

    def save(self, *args, **kwargs):
        """Save; a new message tells the live polls of its inbox once the transaction commits (``kernel.live``)."""
        if self._state.adding:
            note_new_messages([self.inbox_id])
        super().save(*args, **kwargs)


class MessageRevision(models.Model):
    """An earlier text of an edited message: every revision stays, shown to every reader."""

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="revisions", verbose_name=_("message"))
    body = models.TextField(verbose_name=_("body"))
    body_html = models.TextField(verbose_name=_("body html"))
    replaced_at = models.DateTimeField(verbose_name=_("replaced at"))

    class Meta:
        verbose_name = _("message revision")
        verbose_name_plural = _("message revisions")
        ordering = ["replaced_at", "id"]


class ReadMark(models.Model):
    """How far a user has read an inbox: messages with ``received_at`` after ``last_read_at`` are unread."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="read_marks",
        verbose_name=_("user"))
    inbox = models.ForeignKey(Inbox, on_delete=models.CASCADE, related_name="read_marks", verbose_name=_("inbox"))
    last_read_at = models.DateTimeField(verbose_name=_("last read at"))

    class Meta:
        verbose_name = _("read mark")
        verbose_name_plural = _("read marks")
        constraints = [models.UniqueConstraint(fields=["user", "inbox"], name="readmark_one_per_user_inbox")]


class Spectator(models.Model):
    """An account watching a game it does not play ("a spectators' thread exists for spectators and
    eliminated players"). While ``left_at`` is empty the policy (``inboxes.policies.spectator_of``) lets it read
    the game thread and read and post in the spectators' thread, as long as the account holds no seat and no staff
    role in the game. The row stays when the spectator leaves (``left_at``, aware UTC): an account that has watched
    a game never signs up for it or takes a seat in it (the spectator services of the ruleset that has spectators)."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="spectators", verbose_name=_("game"))
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="spectating",
        verbose_name=_("user"))
    joined_at = models.DateTimeField(verbose_name=_("joined at"))
    left_at = models.DateTimeField(null=True, blank=True, verbose_name=_("left at"))

    objects = ReaderRowsQuerySet.as_manager()

    class Meta:
        verbose_name = _("spectator")
        verbose_name_plural = _("spectators")
        constraints = [models.UniqueConstraint(fields=["game", "user"], name="spectator_one_per_game_user")]

    def __str__(self) -> str:
        return f"{self.user} watching {self.game}"

    @classmethod
    def live_readers(cls, rows) -> list[tuple[int, int | None]]:
        """Whose reading a change of the spectators ``rows`` changes, as (game id, user id): each spectator."""
        return field_values(rows, "game_id", "user_id")


track_inboxes(Inbox)
track_reader_rows(Membership)
track_reader_rows(Spectator)
