"""Lepra's setup and night tables (RULES.md L-ASSIGN, L-COMM, L-NIGHT, L-WIN): the setup draws (the mafia draw and
the commissar offers), the nights (godfather elections, night decisions, commissar checks, gifts, resolutions) and
how the game ended. They keep the table names they had in the engine's ``roles`` app (``db_table``), and so do their
constraints and indexes.

Tables and named constraints only; the draws' writes go through ``rulesets.lepra.setup.services``. The draws'
tables hold secrets of the knowledge matrix: the shuffled lists with the numbers name the mafia, a declined
offer's reason is the candidate's alone. Pages read them only through ``rulesets.lepra.setup.services``/views that
check the game state and the viewer.
"""
from __future__ import annotations

from django.contrib.contenttypes.fields import GenericRelation
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from cities.models import City, Game, Resident
from inboxes.models import Inbox
from kernel.public_ids import PublicIdField


class MafiaDraw(models.Model):
    """One game's mafia draw: shuffled numbered lists per city, a published commitment, then the numbers named.

    ``lists``: {city number as str: [resident names in notary order, position 1 first]}; ``salt``: 64 lowercase
    hex digits (32 bytes); ``commitment``: SHA-256 hex of ``roles.draw.canonical_bytes(lists, salt)``, published
    in the recruitment post at ``committed_at`` (aware UTC). ``numbers``: {city number as str: [sorted
    positions]} once named at ``numbers_at`` (always after ``committed_at``), by the Procurator or the site
    (``numbers_by_site``). Never shown before the game is finished: lists + numbers = the mafia.
    """

    game = models.OneToOneField(Game, on_delete=models.CASCADE, related_name="mafia_draw")
    lists = models.JSONField()
    salt = models.CharField(max_length=64)
    commitment = models.CharField(max_length=64)
    notary = models.ForeignKey(Inbox, on_delete=models.PROTECT, related_name="+")
    committed_at = models.DateTimeField()
    numbers = models.JSONField(null=True, blank=True)
    numbers_at = models.DateTimeField(null=True, blank=True)
    numbers_by_site = models.BooleanField(default=False)

    class Meta:
        db_table = "roles_mafiadraw"
        constraints = [
            models.CheckConstraint(condition=Q(numbers__isnull=True, numbers_at__isnull=True)
                                   | Q(numbers__isnull=False, numbers_at__isnull=False),
                                   name="mafiadraw_numbers_with_time"),
            models.CheckConstraint(condition=Q(numbers_at__isnull=True) | Q(numbers_at__gt=models.F("committed_at")),
                                   name="mafiadraw_numbers_after_commitment"),
        ]

    def __str__(self) -> str:
        return f"mafia draw of {self.game}"


class CommissarOffer(models.Model):
    """One offer of the commissar's post: the ``number``-th (1..3, one after another) offer of ``city``, made to
    ``candidate`` through ``inbox`` (a secret inbox: the candidate is its member; the Procurator reads it through
    the policy clause for offer inboxes). ``accepted`` is None while pending. ``decline_reason`` is the
    candidate's optional reason: stored for the record, never shown to the Procurator (who sees "declined" only).
    """

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="commissar_offers")
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="commissar_offers")
    candidate = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="commissar_offers")
    inbox = models.OneToOneField(Inbox, on_delete=models.PROTECT, related_name="commissar_offer")
    number = models.PositiveSmallIntegerField()
    offered_at = models.DateTimeField()
    answered_at = models.DateTimeField(null=True, blank=True)
    accepted = models.BooleanField(null=True, blank=True)
    decline_reason = models.TextField(blank=True)
    public_id = PublicIdField()
    #: Its notifications (``archive.Notification.record``): deleting the record deletes them.
    notifications = GenericRelation("archive.Notification", content_type_field="record_type",
                                    object_id_field="record_id")

    class Meta:
        db_table = "roles_commissaroffer"
        ordering = ["city_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["city", "number"], name="commissaroffer_unique_number_per_city"),
            models.UniqueConstraint(fields=["city", "candidate"], name="commissaroffer_one_per_candidate"),
            models.UniqueConstraint(fields=["city"], condition=Q(answered_at__isnull=True),
                                    name="commissaroffer_one_pending_per_city"),
            models.UniqueConstraint(fields=["city"], condition=Q(accepted=True), name="commissaroffer_one_accepted_per_city"),
            models.CheckConstraint(condition=Q(number__gte=1, number__lte=3), name="commissaroffer_at_most_three_L_COMM_3"),
            models.CheckConstraint(condition=Q(answered_at__isnull=True, accepted__isnull=True)
                                   | Q(answered_at__isnull=False, accepted__isnull=False),
                                   name="commissaroffer_answer_with_time"),
            models.CheckConstraint(condition=Q(decline_reason="") | Q(accepted=False), name="commissaroffer_reason_only_on_decline"),
        ]

    def __str__(self) -> str:
        return f"commissar offer {self.number} in {self.city}"

    @property
    def is_pending(self) -> bool:
        return self.answered_at is None


# ==============================================================================================================
# The night : godfather elections, night actions, commissar checks, gifts, resolution, the game's end
# ==============================================================================================================

class GodfatherElection(models.Model):
    """An election of ``city``'s godfather among its living mafia, opened on ``night`` by the
    Consigliere, by a mafioso's demand for a re-election, or by the site when the godfather died. ``closed_at``
    set when decided; ``winner`` None when it failed (the Consigliere then appoints). Secret (the knowledge
    matrix): read by the city's mafia and the Consigliere only."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="godfather_elections")
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="godfather_elections")
    night = models.PositiveSmallIntegerField()
    opened_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True, blank=True)
    winner = models.ForeignKey(Resident, null=True, blank=True, on_delete=models.PROTECT, related_name="+")

    class Meta:
        db_table = "roles_godfatherelection"
        ordering = ["city_id", "opened_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["city"], condition=Q(closed_at__isnull=True),
                                    name="godfatherelection_one_open_per_city"),
            models.CheckConstraint(condition=Q(winner__isnull=True) | Q(closed_at__isnull=False),
                                   name="godfatherelection_winner_when_closed"),
        ]

    def __str__(self) -> str:
        return f"godfather election in {self.city}, night {self.night}"


class GodfatherVote(models.Model):
    """A mafioso's vote in a godfather election (a simple vote); changeable while open (one row per
    voter, updated)."""

    election = models.ForeignKey(GodfatherElection, on_delete=models.CASCADE, related_name="votes")
    voter = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="+")
    candidate = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField()

    class Meta:
        db_table = "roles_godfathervote"
        ordering = ["at", "id"]
        constraints = [models.UniqueConstraint(fields=["election", "voter"], name="godfathervote_one_per_voter")]


class NightActionKind(models.TextChoices):
    """Kinds of night decisions: the kill in the mafia's own city, and the touring kill in another city."""

    KILL = "kill", _("kill")
    TOUR = "tour", _("touring")


class NightDecision(models.Model):
    """One submission of a city's night decision: every submission is kept, the last one of a (city, night, kind)
    counts at the night's end. ``target`` None = "no kill". ``by_consigliere`` True when the Consigliere entered
    it for a silent godfather. Secret: the mafia of the city and the Consigliere only."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="night_decisions")
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="night_decisions")
    night = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=8, choices=NightActionKind.choices)
    target = models.ForeignKey(Resident, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    by_consigliere = models.BooleanField(default=False)
    at = models.DateTimeField()

    class Meta:
        db_table = "roles_nightdecision"
        ordering = ["at", "id"]
        indexes = [models.Index(fields=["game", "night"], name="nightdecision_game_night_idx")]
        constraints = [models.CheckConstraint(condition=Q(night__gte=2), name="nightdecision_from_night_2_L_DAY_5")]


class CommissarCheck(models.Model):
    """A commissar's check: whether one living resident of the commissar's city is mafia, once per night per
    city, answered at once and truthfully by the site in the check channel. ``is_mafia`` is the answer. The asker is the commissar of ``city`` (``commissar``); never
    shown to the Consigliere."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="commissar_checks")
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="commissar_checks")
    night = models.PositiveSmallIntegerField()
    commissar = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="+")
    target = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="+")
    is_mafia = models.BooleanField()
    at = models.DateTimeField()

    class Meta:
        db_table = "roles_commissarcheck"
        ordering = ["night", "at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["city", "night"], name="commissarcheck_once_per_night_L_NIGHT_5"),
            models.CheckConstraint(condition=Q(night__gte=2), name="commissarcheck_from_night_2_L_DAY_5"),
        ]


class GiftKind(models.TextChoices):
    """What a mafia sends another city's godfather about its touring: a gift (pleased) or a fish (not)."""

    GIFT = "gift", _("gift")
    FISH = "fish", _("fish")


class Gift(models.Model):
    """A gift or a fish from ``from_city``'s mafia to ``to_city``'s godfather, sent by the Consigliere,
    delivered anonymously by city into ``to_city``'s mafia inbox."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="gifts")
    from_city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="+")
    to_city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="+")
    night = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=8, choices=GiftKind.choices)
    text = models.TextField(blank=True)
    at = models.DateTimeField()

    class Meta:
        db_table = "roles_gift"
        ordering = ["at", "id"]
        constraints = [models.CheckConstraint(condition=~Q(from_city=models.F("to_city")), name="gift_to_another_city")]


class NightResolution(models.Model):
    """The one resolution of ``night`` of ``game`` (a night is resolved once, at its end). ``outcome`` is
    ``roles.night.NightOutcome.as_dict()``; it holds check answers: never render it."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="night_resolutions")
    night = models.PositiveSmallIntegerField()
    resolved_at = models.DateTimeField()
    touring_city = models.ForeignKey(City, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    outcome = models.JSONField(default=dict)

    class Meta:
        db_table = "roles_nightresolution"
        ordering = ["-game_id", "night"]
        constraints = [models.UniqueConstraint(fields=["game", "night"], name="nightresolution_once_per_night")]


class GameResult(models.Model):
    """How a game ended: ``winner`` "honest", "mafia" or "" (ended early by the Procurator with ``reason``);
    ``scoreboard`` {city number as str: {"name", "honest", "mafia"}} of the living."""

    game = models.OneToOneField(Game, on_delete=models.CASCADE, related_name="result")
    winner = models.CharField(max_length=8, blank=True)
    reason = models.TextField(blank=True)
    ended_at = models.DateTimeField()
    scoreboard = models.JSONField(default=dict)
    post = models.ForeignKey("cities.PublicPost", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        db_table = "roles_gameresult"
