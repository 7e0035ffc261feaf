"""The M21 night's rows (RULES.md M-NIGHT-1, M-MAFIA-1, M-MAFIA-2, M-ITEM-1): the nights with their seed and their
stored resolution, every night action submitted (append-only: the last counts), the mafia's stash assignment, and
the items in play.

Tables and named constraints only; every write goes through ``rulesets.m21.night_services``. The mafia's kill votes
are not stored here: they are the ``kill name`` lines of the mafia thread's messages (messages are the record), read
again at the planned end of the night.

Secrets: a submission names its actor and target (the actor's and the hosts' alone); the stored ``input`` and
``outcome`` of a night hold every role and result (the hosts' alone until the game is over).
"""
from __future__ import annotations

from django.db import models
from django.db.models import Q

from cities.models import Game, PublicPost, Resident


class M21Night(models.Model):
    """Night ``number`` of an M21 game: started at ``starts_at``, ends at ``planned_end`` (submissions and kill votes
    count up to it, however late the resolution runs), the ``seed`` of its randomness (drawn at the start, recorded),
    and once resolved, ``input`` (a night file of ``manage.py resolve_night m21``: the resolution can be re-run) and
    ``outcome`` (its JSON), ``resolved_at`` and the ``morning_post``."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="m21_nights")
    number = models.PositiveSmallIntegerField()
    starts_at = models.DateTimeField()
    planned_end = models.DateTimeField()
    seed = models.BigIntegerField()
    resolved_at = models.DateTimeField(null=True, blank=True)
    input = models.JSONField(null=True, blank=True)
    outcome = models.JSONField(null=True, blank=True)
    morning_post = models.OneToOneField(PublicPost, null=True, blank=True, on_delete=models.SET_NULL,
                                        related_name="+")

    class Meta:
        ordering = ["-game_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["game", "number"], name="m21night_one_per_number"),
            models.CheckConstraint(condition=Q(planned_end__gt=models.F("starts_at")), name="m21night_ends_after_start"),
            models.CheckConstraint(condition=Q(resolved_at__isnull=True) | Q(outcome__isnull=False),
                                   name="m21night_resolved_with_outcome"),
        ]

    def __str__(self) -> str:
        return f"{self.game} night {self.number}"


class M21NightAction(models.Model):
    """One submission of a night action (M-NIGHT-1): ``action`` a night action key of ``rulesets.m21.roles`` or
    ``use_item`` (with ``item``), or ``withdraw`` (the seat takes back its last submission of ``item``'s use or of
    its role action). Append-only; the last row of a seat's role action (and of each item use) counts."""

    night = models.ForeignKey(M21Night, on_delete=models.CASCADE, related_name="actions")
    seat = models.ForeignKey(Resident, on_delete=models.CASCADE, related_name="m21_night_actions")
    action = models.CharField(max_length=20)
    item = models.CharField(max_length=20, blank=True)
    target = models.ForeignKey(Resident, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    submitted_at = models.DateTimeField()

    class Meta:
        ordering = ["submitted_at", "id"]
        indexes = [models.Index(fields=["night", "seat"], name="m21nightaction_night_seat")]

    def __str__(self) -> str:
        return f"{self.seat} {self.action} at {self.submitted_at:%Y-%m-%d %H:%M:%S}"


class M21StashAssignment(models.Model):
    """The night's one stash item (M-MAFIA-2): ``item`` goes to ``holder`` at the end of the night, assigned by
    ``assigned_by`` (a mafioso); changed by a later assignment the same night (the row is replaced)."""

    night = models.OneToOneField(M21Night, on_delete=models.CASCADE, related_name="stash_assignment")
    item = models.CharField(max_length=20)
    holder = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="+")
    assigned_by = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="+")
    assigned_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.item} to {self.holder}"


class HoldingPlace(models.TextChoices):
    SEAT = "seat", "held by a player"
    SAFE = "safe", "in the evidence safe"


class M21Holding(models.Model):
    """An item in play (M-ITEM-1): held by ``seat`` or locked in the evidence safe, from ``since`` until ``until``
    (None: still there). ``source`` says how it came into play (stash, gadget, safecrack, robbed, confiscated)."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="m21_holdings")
    item = models.CharField(max_length=20)
    place = models.CharField(max_length=4, choices=HoldingPlace.choices, default=HoldingPlace.SEAT)
    seat = models.ForeignKey(Resident, null=True, blank=True, on_delete=models.CASCADE, related_name="m21_holdings")
    source = models.CharField(max_length=20)
    since = models.DateTimeField()
    until = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["since", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(place="seat", seat__isnull=False) | Q(place="safe", seat__isnull=True),
                                   name="m21holding_seat_iff_held"),
        ]

    def __str__(self) -> str:
        return f"{self.item} ({self.place})"
