"""Staff consoles : stand-ins, one city's staff role holding another city's powers for a period.

Tables and named constraints only; every write goes through the services of ``staff.services``. The access policy
(``inboxes.policies``) reads ``StaffStandIn`` to give the holder of a city's staff role standing in the other
city's grants for the period, and nothing else gives staff powers.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from cities.models import City, Game, StaffRole
from kernel.live import ReaderRowsQuerySet, field_values, track_reader_rows
from kernel.public_ids import PublicIdField


class StaffStandIn(models.Model):
    """The city staff role ``stand_in`` (a kind of the ruleset's ``city_staff_kinds``) holds the powers of the
    role ``absent``, of the same kind, in ``city`` (``absent``'s city) from ``starts_at`` to ``ends_at`` (aware UTC,
    end excluded), unless ``ended_at`` ends it earlier.

    Powers follow the roles, not the accounts: if either holder is replaced, the period moves with the role row.
    """

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="stand_ins", verbose_name=_("game"))
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="stand_ins", verbose_name=_("city"))
    absent = models.ForeignKey(StaffRole, on_delete=models.CASCADE, related_name="stood_in_for",
        verbose_name=_("absent"))
    stand_in = models.ForeignKey(StaffRole, on_delete=models.CASCADE, related_name="standing_in",
        verbose_name=_("stand in"))
    starts_at = models.DateTimeField(_("from"))
    ends_at = models.DateTimeField(_("until"))
    granted_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+",
        verbose_name=_("granted by"))
    granted_at = models.DateTimeField(verbose_name=_("granted at"))
    ended_at = models.DateTimeField(null=True, blank=True, verbose_name=_("ended at"))
    ended_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="+", verbose_name=_("ended by"))
    public_id = PublicIdField()

    objects = ReaderRowsQuerySet.as_manager()

    class Meta:
        ordering = ["starts_at", "id"]
        verbose_name = _("stand-in")
        verbose_name_plural = _("stand-ins")
        constraints = [
            models.CheckConstraint(condition=Q(ends_at__gt=F("starts_at")), name="standin_ends_after_start"),
            models.CheckConstraint(condition=~Q(absent=F("stand_in")), name="standin_not_for_oneself"),
        ]
        indexes = [models.Index(fields=["stand_in", "ends_at"], name="standin_role_end_idx")]

    def __str__(self) -> str:
        return f"{self.stand_in} for {self.city}"

    @classmethod
    def live_readers(cls, rows) -> list[tuple[int, int | None]]:
        """Whose reading a change of the periods ``rows`` changes, as (game id, user id): the holders of both
        roles."""
        roles = {pk for pair in field_values(rows, "stand_in_id", "absent_id") for pk in pair}
        return list(StaffRole._base_manager.filter(pk__in=roles).values_list("game_id", "user_id"))


track_reader_rows(StaffStandIn)
