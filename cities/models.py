"""Games, cities, residents (seats), staff roles, public posts, the clock and the audit log.

Tables and named constraints only; every write goes through ``cities.services`` (DESIGN.md).
"""
from __future__ import annotations

from datetime import time

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Lower
from django.utils.translation import gettext_lazy as _

from kernel.live import HeldByAccount, ReaderRowsQuerySet, field_values, note_game_changed, track_reader_rows
from kernel.public_ids import PublicIdField
from kernel.rulesets import default_ruleset_key, registered_rulesets, ruleset_choices

from .staff_kinds import HOST_STAFF_KIND, STAFF_KIND_MAX_LENGTH, staff_kind_choices


class GameStatus(models.TextChoices):
    """Where a game stands. Disclosure after the game (the archive opens its inboxes) keys on ``FINISHED``."""

    RECRUITMENT = "recruitment", _("Recruitment")
    SETUP = "setup", _("Setup")
    RUNNING = "running", _("Running")
    FINISHED = "finished", _("Finished")


class GameQuerySet(models.QuerySet):
    """Games. ``select_for_update`` takes ``FOR NO KEY UPDATE`` by default (PostgreSQL): a lock on a game
    serialises the game's services but never blocks the foreign-key checks of rows inserted for that game
    (``GameEvent``, ``Message``...), which take ``FOR KEY SHARE``. A post therefore never waits behind a
    scheduler handler that holds its game (DESIGN.md "The clock"). No key of a game is ever updated."""

    def select_for_update(self, nowait=False, skip_locked=False, of=(), no_key=True):
        return super().select_for_update(nowait=nowait, skip_locked=skip_locked, of=of, no_key=no_key)

    def update(self, **kwargs):
        """Update; a change of ``status`` changes who reads what for every reader of the games (``kernel.live``)."""
        if "status" in kwargs:
            for pk in self.values_list("pk", flat=True):
                note_game_changed(pk)
        return super().update(**kwargs)


class Game(models.Model):
    """One hosted game.

    ``day_number`` is the current game day (0 before day 1). ``time_zone`` is an IANA name; deadlines are built
    from it with ``zoneinfo`` and stored in UTC.
    """

    slug = models.SlugField(max_length=60, unique=True, verbose_name=_("slug"))
    title = models.CharField(_("title"), max_length=200)
    #: The key of a registered ruleset (``kernel.rulesets``): the choices are the registry's, read when asked.
    ruleset = models.CharField(max_length=10, choices=ruleset_choices, default=default_ruleset_key,
                               verbose_name=_("ruleset"))
    status = models.CharField(max_length=12, choices=GameStatus.choices, default=GameStatus.RECRUITMENT,
        verbose_name=_("status"))
    time_zone = models.CharField(max_length=64, default="Europe/Moscow", verbose_name=_("time zone"))
    day_number = models.PositiveSmallIntegerField(default=0, verbose_name=_("day number"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    ended_at = models.DateTimeField(null=True, blank=True, verbose_name=_("ended at"))
    # Recruitment: the recruitment post's rules and how the cities are formed from the sign-ups.
    rules_text = models.TextField(_("rules"), blank=True, default="", db_default="")
    #: How cities are formed: ``city_count`` cities when set, else as many cities of about ``city_size`` as fit.
    city_count = models.PositiveSmallIntegerField(_("number of cities"), null=True, blank=True)
    city_size = models.PositiveSmallIntegerField(_("target city size"), default=20, db_default=20)
    #: The day's start as a wall-clock time in ``time_zone``.
    day_start = models.TimeField(_("day start"), default=time(10, 0), db_default=time(10, 0))
    signups_closed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("signups closed at"))
    lists_published_at = models.DateTimeField(null=True, blank=True, verbose_name=_("lists published at"))
    #: The shortest time the Procurator gets to edit the drafted daily post before the site publishes it.
    daily_post_edit_minutes = models.PositiveSmallIntegerField(_("daily post edit window (minutes)"), default=30,
                                                               db_default=30)

    objects = GameQuerySet.as_manager()

    @classmethod
    def from_db(cls, db, field_names, values):
        """The instance, with the status it was read with (a save that changes it renews the game's live version)."""
        instance = super().from_db(db, field_names, values)
        instance._live_status = instance.__dict__.get("status")
        return instance

    def save(self, *args, **kwargs):
        """Save; a changed ``status`` (the start, the end) changes who reads what for every reader of the game: its
        live polls take the full path after the commit (``kernel.live``)."""
        changed = not self._state.adding and getattr(self, "_live_status", None) != self.status
        super().save(*args, **kwargs)
        if changed:
            note_game_changed(self.pk)
        self._live_status = self.status

    class Meta:
        verbose_name = _("game")
        verbose_name_plural = _("games")
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(city_count__isnull=True) | Q(city_count__gte=1), name="game_city_count_positive"),
            models.CheckConstraint(condition=Q(city_size__gte=2), name="game_city_size_at_least_2"),
        ]

    def __str__(self) -> str:
        return self.title

    @property
    def is_finished(self) -> bool:
        return self.status == GameStatus.FINISHED

    @property
    def language(self) -> str:
        """The UI language of the game's pages, declared by its ruleset (``RulesetSpec.language``,
        DESIGN.md "Pages"); English for a ruleset that is not registered."""
        spec = registered_rulesets().get(self.ruleset)
        return spec.language if spec is not None else "en"


class City(models.Model):
    """A city of a game. ``number`` is 1-based and fixes the city order (touring rotation); the staff
    console and forms address a city by its ``public_id`` (its database id would count every game's cities)."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="cities", verbose_name=_("game"))
    number = models.PositiveSmallIntegerField(verbose_name=_("number"))
    name = models.CharField(_("name"), max_length=100)
    public_id = PublicIdField()

    class Meta:
        ordering = ["-game_id", "number"]
        verbose_name = _("city")
        verbose_name_plural = _("cities")
        constraints = [
            models.UniqueConstraint(fields=["game", "number"], name="city_unique_number_per_game"),
            models.UniqueConstraint(Lower("name"), "game", name="city_unique_name_per_game_ci"),
            models.CheckConstraint(condition=Q(number__gte=1), name="city_number_positive"),
        ]

    def __str__(self) -> str:
        return self.name


class Alignment(models.TextChoices):
    """A resident's side. Secret during the game (the knowledge matrix): read it only through ``visible_alignment``."""

    HONEST = "honest", _("honest")
    MAFIA = "mafia", _("mafia")


class LifeStatus(models.TextChoices):
    """Alive, dead, or imprisoned (where a ruleset imprisons); *living* = alive (RULES.md terms)."""

    ALIVE = "alive", _("alive")
    DEAD = "dead", _("dead")
    IMPRISONED = "imprisoned", _("imprisoned")


class Resident(HeldByAccount, models.Model):
    """A seat: the player's place in the game. In a game whose ruleset has cities (``RulesetSpec.has_cities``) the
    seat is in one city for the whole game; elsewhere ``city`` is None (``cities.services.check_seat_city``).

    ``user`` is whoever holds the seat now; a replacement changes it and nothing else. ``alignment`` is a secret
    of the knowledge matrix: pages learn it only through ``inboxes.knowledge.visible_alignment``.
    ``alignment_announced`` becomes true when a death announcement discloses the alignment. What a ruleset adds to
    a seat (ranks, roles) lives in its own one-to-one rows (``RulesetSpec.seat_state_relations``).
    """

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="residents", verbose_name=_("game"))
    city = models.ForeignKey(City, null=True, blank=True, on_delete=models.CASCADE, related_name="residents",
        verbose_name=_("city"))
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="seats",
        verbose_name=_("user"))
    name = models.CharField(_("name"), max_length=60)
    alignment = models.CharField(max_length=10, choices=Alignment.choices, default=Alignment.HONEST,
        verbose_name=_("alignment"))
    status = models.CharField(max_length=12, choices=LifeStatus.choices, default=LifeStatus.ALIVE,
        verbose_name=_("status"))
    alignment_announced = models.BooleanField(default=False, verbose_name=_("alignment announced"))
    died_at = models.DateTimeField(null=True, blank=True, verbose_name=_("died at"))
    public_id = PublicIdField()

    objects = ReaderRowsQuerySet.as_manager()

    class Meta:
        verbose_name = _("resident")
        verbose_name_plural = _("residents")
        ordering = ["city_id", "name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["game", "user"], name="resident_one_seat_per_user_per_game"),
            models.UniqueConstraint(fields=["game", "name"], name="resident_unique_name_per_game"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_living(self) -> bool:
        """Alive and not imprisoned (RULES.md terms)."""
        return self.status == LifeStatus.ALIVE

    @property
    def name_and_city(self) -> str:
        """How staff pages name the seat: "name · city" in a game with cities, the name alone in a game without
        (its seats have none). Select the city with the seat (a query otherwise)."""
        return f"{self.name} · {self.city.name}" if self.city_id else self.name

    @classmethod
    def live_readers(cls, rows) -> list[tuple[int, int | None]]:
        """Whose reading a change of the seats ``rows`` (a queryset or instances) may change, as (game id, user id):
        each seat's holder, and the holders of the seats out of play in the same games (whether a seat is held
        back from an inbox follows from the other seats' state, ``RulesetSpec.seats_held_back``)."""
        pairs = field_values(rows, "game_id", "user_id")
        games = {game_id for game_id, _user in pairs}
        out_of_play = cls._base_manager.filter(game_id__in=games).exclude(status=LifeStatus.ALIVE)
        return [*pairs, *out_of_play.values_list("game_id", "user_id")] if games else pairs


class StaffRole(HeldByAccount, models.Model):
    """A staff role held by an ordinary account in one game: a game role, not a site administrator (a superuser
    gets no staff power from that flag).

    ``kind`` is the game's host (``cities.staff_kinds.HOST_STAFF_KIND``) or a kind the game's ruleset registers
    (``RulesetSpec.staff_kinds``); a kind of its ``city_staff_kinds`` has a ``city``, the others none (checked by
    ``cities.services.do_appoint_staff``). Replacing a staff member changes ``user`` and moves every power at once,
    because the access policy derives staff powers from this row. Who holds a kind of the ruleset's
    ``secret_staff_kinds`` is a secret (the knowledge matrix): list staff only through
    ``inboxes.knowledge.visible_staff``.
    """

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="staff_roles", verbose_name=_("game"))
    kind = models.CharField(max_length=STAFF_KIND_MAX_LENGTH, choices=staff_kind_choices, verbose_name=_("kind"))
    city = models.ForeignKey(City, null=True, blank=True, on_delete=models.CASCADE, related_name="staff_roles",
        verbose_name=_("city"))
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="staff_roles",
        verbose_name=_("user"))
    since = models.DateTimeField(auto_now_add=True, verbose_name=_("since"))
    public_id = PublicIdField()

    objects = ReaderRowsQuerySet.as_manager()

    class Meta:
        verbose_name = _("staff role")
        verbose_name_plural = _("staff roles")
        ordering = ["-game_id", "kind", "city_id"]
        constraints = [
            models.UniqueConstraint(fields=["game"], condition=Q(kind=HOST_STAFF_KIND),
                                    name="staffrole_one_host_per_game"),
            models.UniqueConstraint(fields=["city", "kind"], condition=Q(city__isnull=False),
                                    name="staffrole_one_per_kind_per_city"),
            models.UniqueConstraint(fields=["game", "user"], name="staffrole_one_role_per_user_per_game"),
        ]

    def __str__(self) -> str:
        if self.city_id:
            return f"{self.get_kind_display()} ({self.city})"
        return self.get_kind_display()

    @classmethod
    def live_readers(cls, rows) -> list[tuple[int, int | None]]:
        """Whose reading a change of the staff roles ``rows`` changes, as (game id, user id): each role's holder."""
        return field_values(rows, "game_id", "user_id")


class Signup(models.Model):
    """A user's sign-up for a game in recruitment, from which the cities are formed. Withdrawing sets
    ``withdrawn_at`` (kept for the record); signing up again makes a new row. At most one active (not withdrawn)
    sign-up per user and game."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="signups", verbose_name=_("game"))
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="signups",
        verbose_name=_("user"))
    signed_up_at = models.DateTimeField(verbose_name=_("signed up at"))
    withdrawn_at = models.DateTimeField(null=True, blank=True, verbose_name=_("withdrawn at"))
    public_id = PublicIdField()

    class Meta:
        verbose_name = _("signup")
        verbose_name_plural = _("signups")
        ordering = ["-game_id", "signed_up_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["game", "user"], condition=Q(withdrawn_at__isnull=True),
                                    name="signup_one_active_per_user_per_game"),
            models.CheckConstraint(condition=Q(withdrawn_at__isnull=True) | Q(withdrawn_at__gte=models.F("signed_up_at")),
                                   name="signup_withdrawn_after_signup"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.game}"

    @property
    def is_active(self) -> bool:
        return self.withdrawn_at is None


class PostKind(models.TextChoices):
    """Public posts of the Procurator: the recruitment post, the daily posts, announcements."""

    RECRUITMENT = "recruitment", _("Recruitment post")
    DAILY = "daily", _("Daily post")
    ANNOUNCEMENT = "announcement", _("Announcement")


class PublicPost(models.Model):
    """A public post: readable by everyone, logged in or not, once ``published_at`` is set.

    ``body_html`` is the sanitised rendering of ``body`` made by the service that stores it.
    """

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="posts", verbose_name=_("game"))
    kind = models.CharField(max_length=12, choices=PostKind.choices, verbose_name=_("kind"))
    title = models.CharField(_("title"), max_length=200)
    body = models.TextField(_("text"))
    body_html = models.TextField(blank=True, verbose_name=_("body html"))
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+",
        verbose_name=_("author"))
    created_at = models.DateTimeField(verbose_name=_("created at"))
    publish_at = models.DateTimeField(null=True, blank=True, verbose_name=_("publish at"))
    published_at = models.DateTimeField(null=True, blank=True, verbose_name=_("published at"))
    public_id = PublicIdField()

    class Meta:
        verbose_name = _("public post")
        verbose_name_plural = _("public posts")
        ordering = ["published_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["game"], condition=Q(kind="recruitment"), name="publicpost_one_recruitment_per_game"),
        ]

    def __str__(self) -> str:
        return self.title


class ScheduledEvent(models.Model):
    """A point of game time (DESIGN.md "The clock"): ``kind`` runs at ``due_at`` (aware UTC), once.

    ``done_at`` is set in the same transaction as the handler's changes. A failing handler leaves the row
    pending with ``attempts``/``last_error`` and ``retry_at`` for the next try; later events of the same game
    wait for it (per-game ordering).
    """

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="scheduled_events", verbose_name=_("game"))
    kind = models.CharField(max_length=40, verbose_name=_("kind"))
    due_at = models.DateTimeField(verbose_name=_("due at"))
    payload = models.JSONField(default=dict, blank=True, verbose_name=_("payload"))
    created_at = models.DateTimeField(verbose_name=_("created at"))
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        verbose_name=_("created by"))
    done_at = models.DateTimeField(null=True, blank=True, verbose_name=_("done at"))
    cancelled_at = models.DateTimeField(null=True, blank=True, verbose_name=_("cancelled at"))
    attempts = models.PositiveIntegerField(default=0, verbose_name=_("attempts"))
    #: When the running attempt began (committed before the handler runs); cleared when it finishes. Still set
    #: while nobody holds the row: that attempt crashed (worker killed, connection lost).
    started_at = models.DateTimeField(null=True, blank=True, verbose_name=_("attempt started at"))
    retry_at = models.DateTimeField(null=True, blank=True, verbose_name=_("retry at"))
    last_error = models.TextField(blank=True, verbose_name=_("last error"))

    class Meta:
        verbose_name = _("scheduled event")
        verbose_name_plural = _("scheduled events")
        ordering = ["due_at", "id"]
        indexes = [
            models.Index(fields=["due_at", "id"], condition=Q(done_at__isnull=True, cancelled_at__isnull=True), name="schedev_pending_idx"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(done_at__isnull=True) | Q(cancelled_at__isnull=True), name="schedev_not_done_and_cancelled"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} @ {self.due_at:%Y-%m-%d %H:%M:%S}Z"


class GameEvent(models.Model):
    """The audit log: one row per staff, player or scheduler action (``actor`` None = the scheduler).

    ``payload`` may name secrets (who posted in a mafia inbox), so the log is shown only through the access
    policy (the staff's audit scopes) and after the game; it is not registered in the admin.
    """

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="events", verbose_name=_("game"))
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        verbose_name=_("actor"))
    kind = models.CharField(max_length=60, verbose_name=_("kind"))
    at = models.DateTimeField(verbose_name=_("at"))
    payload = models.JSONField(default=dict, blank=True, verbose_name=_("payload"))
    #: The audit log's link to an event: its database id would count the events hidden from the viewer (a post
    #: in a mafia inbox is an event too).
    public_id = PublicIdField()

    class Meta:
        verbose_name = _("game event")
        verbose_name_plural = _("game events")
        ordering = ["at", "id"]
        indexes = [models.Index(fields=["game", "at"], name="gameevent_game_at_idx")]

    def __str__(self) -> str:
        return f"{self.kind} @ {self.at:%Y-%m-%d %H:%M:%S}Z"


class GameDay(models.Model):
    """One game day of the phase plan (DESIGN.md "The clock"), and the night after it.

    Times are aware UTC, derived with ``zoneinfo`` from ``Game.day_start`` in ``Game.time_zone`` by
    ``cities.clock``: ``starts_at`` the day start (the daily post is published then); ``ends_at`` the
    end of the day: all execution voting is over by then (the 00:00 ending the day's last calendar day, or
    earlier for a shortened day) and the night starts; ``night_ends_at`` the end of the night that follows
    (night ``number``: resolution, then the next daily post is drafted), shortly before the next day starts.
    ``calendar_days`` 2 or 3 make a long day, ``shortened_hours`` a shortened final day.
    ``start_fixed``: the Procurator fixed ``starts_at`` by hand (a re-plan keeps it). ``started_at`` /
    ``ended_at``: when the scheduler began the day and began its night. ``post`` is the daily post published at
    this day's start; ``free_text`` the Procurator's text for it, written before it is drafted; ``announced`` the
    ids of the dead whose alignment that post announces.
    """

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="days", verbose_name=_("game"))
    number = models.PositiveSmallIntegerField(verbose_name=_("number"))
    starts_at = models.DateTimeField(verbose_name=_("starts at"))
    ends_at = models.DateTimeField(verbose_name=_("ends at"))
    night_ends_at = models.DateTimeField(verbose_name=_("night ends at"))
    #: The planned start of the night when a deadline of the day (a court deadline, a judge election, a voting)
    #: holds it after ``ends_at``; None: the night starts at ``ends_at``. The night's end and the next day move
    #: with it (``cities.clock.night_after``).
    night_starts_at = models.DateTimeField(null=True, blank=True, verbose_name=_("night starts at"))
    calendar_days = models.PositiveSmallIntegerField(default=1, verbose_name=_("calendar days"))
    shortened_hours = models.PositiveSmallIntegerField(null=True, blank=True, verbose_name=_("shortened hours"))
    start_fixed = models.BooleanField(default=False, verbose_name=_("start fixed"))
    started_at = models.DateTimeField(null=True, blank=True, verbose_name=_("started at"))
    ended_at = models.DateTimeField(null=True, blank=True, verbose_name=_("ended at"))
    post = models.OneToOneField(PublicPost, null=True, blank=True, on_delete=models.SET_NULL, related_name="game_day",
        verbose_name=_("post"))
    free_text = models.TextField(blank=True, verbose_name=_("free text"))
    announced = models.JSONField(default=list, blank=True, verbose_name=_("announced"))

    class Meta:
        verbose_name = _("game day")
        verbose_name_plural = _("game days")
        ordering = ["-game_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["game", "number"], name="gameday_one_per_number_per_game"),
            models.CheckConstraint(condition=Q(number__gte=1), name="gameday_number_positive"),
            models.CheckConstraint(condition=Q(calendar_days__gte=1, calendar_days__lte=3),
                                   name="gameday_one_to_three_calendar_days"),
            models.CheckConstraint(condition=Q(starts_at__lt=F("ends_at")), name="gameday_starts_before_it_ends"),
            models.CheckConstraint(condition=Q(ends_at__lte=F("night_ends_at")), name="gameday_night_after_day"),
            models.CheckConstraint(condition=Q(shortened_hours__isnull=True) | Q(calendar_days=1),
                                   name="gameday_shortened_day_is_not_long"),
        ]

    def __str__(self) -> str:
        return f"day {self.number} @ {self.starts_at:%Y-%m-%d %H:%M}Z"


class ClockPause(models.Model):
    """The site's scheduler is paused (``manage.py clock pause``, for an upgrade or a restore): while a row exists
    no scheduled event runs; events keep their planned times and run in order on ``clock resume`` (their cut-offs
    stay the planned times). At most one row (a constant key)."""

    key = models.CharField(max_length=10, default="site", unique=True, verbose_name=_("key"))
    paused_at = models.DateTimeField(verbose_name=_("paused at"))
    reason = models.CharField(max_length=200, blank=True, default="", verbose_name=_("reason"))

    class Meta:
        verbose_name = _("clock pause")
        verbose_name_plural = _("clock pauses")

    def __str__(self) -> str:
        return f"paused since {self.paused_at:%Y-%m-%d %H:%M:%S}Z"


track_reader_rows(Resident)
track_reader_rows(StaffRole)
