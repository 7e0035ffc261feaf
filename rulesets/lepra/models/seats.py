"""Lepra's own rows about a seat (RULES.md L-ASSIGN, L-COMM, L-JUDGE, L-NIGHT-3, L-SPIRIT, L-STAFF-6).

Read and written only through ``rulesets.lepra.seats``; the engine's ``Resident`` knows nothing of them.
"""
from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from cities.models import Alignment, City, LifeStatus, Resident
from kernel.live import ReaderRowsQuerySet, field_values, track_reader_rows


class LepraSeat(models.Model):
    """The Lepra ranks of one seat: commissar (L-COMM), sitting judge (L-JUDGE), godfather (L-NIGHT-3) and spirit
    for a day (L-SPIRIT-2), with the dates of the secret ranks (aware UTC; None: since before the game's first
    death, for rows older than the dates). The ranks and their dates are secrets of L-STAFF-6: pages learn them
    only through the access policy (``inboxes.knowledge``), which asks ``LepraRuleset``.

    ``city``, ``alignment`` and ``status`` copy the resident's so that the database itself keeps one commissar and
    one sitting judge and one living godfather per city, a commissar honest and a godfather mafia; the seat
    services of ``rulesets.lepra.seats`` keep them equal to the resident's (a seat never changes city, its
    alignment is drawn before any rank, and its status changes only by the shared death service, whose
    ``after_deaths`` hook updates the copy).
    """

    resident = models.OneToOneField(Resident, on_delete=models.CASCADE, primary_key=True, related_name="lepra_seat",
                                    verbose_name=_("resident"))
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="+", verbose_name=_("city"))
    alignment = models.CharField(max_length=10, choices=Alignment.choices, default=Alignment.HONEST,
                                 verbose_name=_("alignment"))
    status = models.CharField(max_length=12, choices=LifeStatus.choices, default=LifeStatus.ALIVE,
                              verbose_name=_("status"))
    is_commissar = models.BooleanField(default=False, verbose_name=_("is commissar"))
    is_judge = models.BooleanField(default=False, verbose_name=_("is judge"))
    is_godfather = models.BooleanField(default=False, verbose_name=_("is godfather"))
    is_spirit = models.BooleanField(default=False, verbose_name=_("is spirit"))
    godfather_since = models.DateTimeField(null=True, blank=True, verbose_name=_("godfather since"))
    godfather_until = models.DateTimeField(null=True, blank=True, verbose_name=_("godfather until"))
    commissar_since = models.DateTimeField(null=True, blank=True, verbose_name=_("commissar since"))

    class Meta:
        verbose_name = _("Lepra seat")
        verbose_name_plural = _("Lepra seats")
        constraints = [
            models.UniqueConstraint(fields=["city"], condition=Q(is_commissar=True),
                                    name="lepraseat_one_commissar_per_city"),
            models.UniqueConstraint(fields=["city"], condition=Q(is_judge=True, status="alive"),
                                    name="lepraseat_one_sitting_judge_per_city"),
            models.UniqueConstraint(fields=["city"], condition=Q(is_godfather=True, status="alive"),
                                    name="lepraseat_one_living_godfather_per_city"),
            models.CheckConstraint(condition=~Q(is_commissar=True, alignment="mafia"),
                                   name="lepraseat_commissar_is_honest"),
            models.CheckConstraint(condition=~Q(is_godfather=True) | Q(alignment="mafia"),
                                   name="lepraseat_godfather_is_mafia"),
        ]

    objects = ReaderRowsQuerySet.as_manager()

    def __str__(self) -> str:
        return f"Lepra seat {self.resident_id}"

    @classmethod
    def live_readers(cls, rows) -> list[tuple[int, int | None]]:
        """Whose reading a change of the ranks ``rows`` may change (a spirit's voting inboxes, L-SPIRIT-2; what a
        rank lets its holder read): the seats' holders, as ``Resident.live_readers`` names them."""
        residents = {pk for (pk,) in field_values(rows, "resident_id")}
        return Resident.live_readers(Resident._base_manager.filter(pk__in=residents))


track_reader_rows(LepraSeat)
