"""The records of the setup draws: the mafia draw (L-ASSIGN) and the commissar offers (L-COMM).

Tables and named constraints only; every write goes through ``roles.services``. Both tables hold secrets of
L-STAFF-6: the shuffled lists with the numbers name the mafia, a declined offer's reason is the candidate's
alone. Pages read them only through ``roles.services``/views that check the game state and the viewer.
"""
from __future__ import annotations

from django.db import models
from django.db.models import Q

from cities.models import City, Game, Resident
from inboxes.models import Inbox


class MafiaDraw(models.Model):
    """One game's mafia draw (L-ASSIGN-1..3).

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
    """One offer of the commissar's post (L-COMM-1..3): the ``number``-th (1..3) offer of ``city``, made to
    ``candidate`` through ``inbox`` (a secret inbox: the candidate is its member; the Procurator reads it through
    the policy clause for offer inboxes). ``accepted`` is None while pending. ``decline_reason`` is the
    candidate's optional reason: stored for the record, never shown to the Procurator (L-COMM-2).
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

    class Meta:
        ordering = ["city__number", "number"]
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
