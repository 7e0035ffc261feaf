"""The M21 game's own rows (RULES.md Part 2): its settings and setup, each seat's role, the days of the game thread
with their planned deadlines and results, the receipt of every game-thread post and the Judge's orders.

A day's result is never stored alone: it is re-derived from the game thread's messages and the ``M21DayOrder`` rows
(``rulesets.m21.day.run_m21_day``) and the stored result is what that derivation gave when the day ended.
"""
from __future__ import annotations

from datetime import time

from django.conf import settings
from django.db import models
from django.db.models import Q

from cities.models import Game, PublicPost, Resident
from inboxes.models import Inbox, Message
from kernel.live import ALL, ReaderRowsQuerySet, field_values, track_reader_rows


class M21Game(models.Model):
    """The M21 settings of one game (M-SETUP-1/2, M-VOTE-7, M-ROLE-1) and its provable deal.

    ``setup``: the chosen setup (``rulesets.m21.setup.M21Setup.as_dict``), None until the host chooses or draws one.
    ``deal_commitment`` is public from the deal on; ``deal_salt`` and ``deal_lists`` are secret until the game is
    over (then anyone can verify the deal, ``rulesets.m21.setup.verify_deal``).
    """

    game = models.OneToOneField(Game, on_delete=models.CASCADE, related_name="m21")
    day_hours = models.PositiveSmallIntegerField(default=48)
    night_hours = models.PositiveSmallIntegerField(default=24)
    phase_shift = models.TimeField(default=time(22, 0))
    vote_preset = models.CharField(max_length=10, default="m21",
                                   choices=[("m21", "M21 (END-hammer, plurality at the deadline)"),
                                            ("classic", "classic forum (a majority ends the day at once)")])
    self_votes_allowed = models.BooleanField(default=True)
    no_lynch_allowed = models.BooleanField(default=True)
    #: M-SETUP-6 [interp]: anyone, logged in or not, reads the game thread during the game; off, its members only.
    game_thread_public = models.BooleanField(default=True, db_default=True)
    setup = models.JSONField(null=True, blank=True)
    setup_drawn = models.BooleanField(default=False)
    setup_post = models.OneToOneField(PublicPost, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    deal_commitment = models.CharField(max_length=64, blank=True)
    deal_salt = models.CharField(max_length=64, blank=True)
    deal_lists = models.JSONField(null=True, blank=True)
    dealt_at = models.DateTimeField(null=True, blank=True)

    objects = ReaderRowsQuerySet.as_manager()

    def __str__(self) -> str:
        return f"M21 settings of {self.game}"

    @classmethod
    def live_readers(cls, rows) -> list[tuple[int, int]]:
        """Whose reading a change of the settings ``rows`` may change: everyone in their games
        (``game_thread_public`` opens the game thread to all, ``kernel.live.ALL``)."""
        return [(game_id, ALL) for (game_id,) in field_values(rows, "game_id")]


class M21Seat(models.Model):
    """A seat's role (M-ROLE): the role key of ``rulesets.m21.roles``, cop sanity (M-ROLE-1, secret until death),
    the per-seat state (uses left) and the seat's role PM inbox with the hosts."""

    resident = models.OneToOneField(Resident, on_delete=models.CASCADE, related_name="m21_seat")
    role = models.CharField(max_length=20)
    sane = models.BooleanField(default=True)
    state = models.JSONField(default=dict, blank=True)
    role_pm = models.OneToOneField(Inbox, null=True, blank=True, on_delete=models.SET_NULL, related_name="m21_seat")

    objects = ReaderRowsQuerySet.as_manager()

    def __str__(self) -> str:
        return f"{self.resident}: {self.role}"

    @classmethod
    def live_readers(cls, rows) -> list[tuple[int, int | None]]:
        """Whose reading a change of the seats' roles and states ``rows`` may change (a bust-out spent or used
        decides which imprisoned seats are held back, ``rulesets.m21.bust_out``): the seats' holders and those of
        the seats out of play in their games (``Resident.live_readers``)."""
        residents = {pk for (pk,) in field_values(rows, "resident_id")}
        return Resident.live_readers(Resident._base_manager.filter(pk__in=residents))


class DayStatus(models.TextChoices):
    OPEN = "open", "open"
    AWAITING_CASTING_VOTE = "awaiting", "awaiting the Judge's casting vote"
    DECIDED = "decided", "decided"


class M21Day(models.Model):
    """One day of the game thread (M-VOTE): when it started, its planned deadline (moved only by the host's
    extension, M-SETUP-2), when it ended and how (``result``: the ``ForumDayEnd`` as data plus the imprisoned
    seat), for a tie waiting for the Judge, the end of the casting window, and ``tally``, the vote stored as it goes
    (a page reads it; tests check it against a recount from the posts, ``day_services.audit_m21_day``)."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="m21_days")
    number = models.PositiveSmallIntegerField()
    thread = models.ForeignKey(Inbox, on_delete=models.PROTECT, related_name="m21_days")
    starts_at = models.DateTimeField()
    deadline = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=8, choices=DayStatus.choices, default=DayStatus.OPEN)
    how = models.CharField(max_length=20, blank=True)
    casting_window_ends_at = models.DateTimeField(null=True, blank=True)
    imprisoned = models.ForeignKey(Resident, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    result = models.JSONField(null=True, blank=True)
    tally = models.JSONField(null=True, blank=True, help_text=(
        "The day's vote as it stands (rulesets.m21.day.M21DayRun.snapshot): each seat's vote, END mark, posts and "
        "votes cast, the hammer; updated by each post, death, replacement and Judge's order in its transaction."))

    class Meta:
        ordering = ["-game_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["game", "number"], name="m21day_one_per_number"),
            models.UniqueConstraint(fields=["game"], condition=Q(status="open"), name="m21day_one_open_per_game"),
        ]

    def __str__(self) -> str:
        return f"{self.game} day {self.number}"


class OrderKind(models.TextChoices):
    CLOSE_PROCEEDINGS = "close_proceedings", "close proceedings"
    CASTING_VOTE = "casting_vote", "casting vote"
    REMOVAL = "removal", "removal or death during the day"
    REPLACEMENT = "replacement", "replacement"


class M21DayOrder(models.Model):
    """A record of the day that is not a game-thread post, in the same order (``at``, then id): a Judge's order
    (M-ROLE judge), a death or removal during the day (M-VOTE-9) or a replacement (L-REPLACE-1). ``target`` is
    the casting vote's candidate (None with ``no_lynch``), the seat removed or replaced; ``account`` the new
    account's user id of a replacement."""

    day = models.ForeignKey(M21Day, on_delete=models.CASCADE, related_name="orders")
    kind = models.CharField(max_length=20, choices=OrderKind.choices)
    at = models.DateTimeField()
    seat = models.ForeignKey(Resident, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    target = models.ForeignKey(Resident, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    no_lynch = models.BooleanField(default=False)
    payload = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"{self.kind} at {self.at:%Y-%m-%d %H:%M:%S}"


class M21PostReceipt(models.Model):
    """What one game-thread post did (M-VOTE-1, M-VOTE-7): one line per command, the post's text untouched.
    ``lines``: ``[{"command": "##VOTE bo", "accepted": true, "message": "Carol votes Bob.", "candidates": []}]``."""

    message = models.OneToOneField(Message, on_delete=models.CASCADE, related_name="m21_receipt")
    day = models.ForeignKey(M21Day, on_delete=models.CASCADE, related_name="receipts")
    lines = models.JSONField(default=list)

    def __str__(self) -> str:
        return f"receipt of message {self.message_id}"

class M21ReplacementVolunteer(models.Model):
    """An account on the replacement list of a running game (forum practice: replacements on deck; L-REPLACE-1):
    it volunteered at ``volunteered_at`` and may withdraw (``withdrawn_at``); the host picks it for a seat
    (``seat``, ``taken_at``, ``replaced_name``: the name the seat had, for the "replacing" note)."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="m21_volunteers")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="m21_volunteering")
    volunteered_at = models.DateTimeField()
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    taken_at = models.DateTimeField(null=True, blank=True)
    seat = models.ForeignKey(Resident, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    replaced_name = models.CharField(max_length=60, blank=True)

    class Meta:
        ordering = ["volunteered_at", "id"]
        constraints = [models.UniqueConstraint(fields=["game", "user"], condition=models.Q(
            withdrawn_at__isnull=True, taken_at__isnull=True), name="m21_one_open_volunteering_per_account")]

    def __str__(self) -> str:
        return f"{self.user} volunteers in {self.game}"


from .night_models import HoldingPlace, M21Holding, M21Night, M21NightAction, M21StashAssignment  # noqa: E402,F401

track_reader_rows(M21Game)
track_reader_rows(M21Seat)
