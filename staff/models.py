"""Staff consoles : Tribune stand-ins and impeachment of a Tribune.

Tables and named constraints only; every write goes through ``staff.services``. The access policy
(``inboxes.policies``) reads ``TribuneStandIn`` to give a standing-in Tribune the other city's grants for the
period, and nothing else gives staff powers.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from cities.models import City, Game, Resident, StaffRole
from kernel.live import ReaderRowsQuerySet, field_values, track_reader_rows
from kernel.public_ids import PublicIdField


class TribuneStandIn(models.Model):
    """The Tribune ``stand_in`` holds the Tribune powers of ``city`` (whose Tribune role is ``absent``) from
    ``starts_at`` to ``ends_at`` (aware UTC, end excluded), unless ``ended_at`` ends it earlier.

    Powers follow the roles, not the accounts: if either Tribune is replaced (impeachment), the period moves
    with the role row.
    """

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="tribune_stand_ins", verbose_name=_("game"))
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="tribune_stand_ins", verbose_name=_("city"))
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
        verbose_name = _("Tribune stand-in")
        verbose_name_plural = _("Tribune stand-ins")
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


class ImpeachmentRuling(models.TextChoices):
    """The Procurator's four rulings on an impeachment."""

    REPLACE = "replace", _("replace the Tribune")
    BONUS = "bonus", _("bonus to the complainants")
    UNFOUNDED = "unfounded", _("rejected as unfounded")
    TRIVIAL = "trivial", _("closed as trivial")


class ImpeachmentDemand(models.Model):
    """A demand by residents of ``city`` to impeach its Tribune (``tribune``, the role).

    ``reached_at`` is set when the living signers first reach 30% of the city's living residents; from then it is
    before the Procurator, who opens ``inbox`` and records ``ruling``. ``reason`` of a trivial ruling
    is hidden until the game ends. At most one undecided demand per city.
    """

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="impeachment_demands", verbose_name=_("game"))
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="impeachment_demands", verbose_name=_("city"))
    tribune = models.ForeignKey(StaffRole, on_delete=models.PROTECT, related_name="impeachment_demands",
        verbose_name=_("tribune"))
    tribune_user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+",
        verbose_name=_("tribune user"))
    initiator = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="impeachments_initiated",
        verbose_name=_("initiator"))
    created_at = models.DateTimeField(verbose_name=_("created at"))
    reached_at = models.DateTimeField(null=True, blank=True, verbose_name=_("reached at"))
    inbox = models.OneToOneField("inboxes.Inbox", null=True, blank=True, on_delete=models.PROTECT,
                                 related_name="impeachment_demand", verbose_name=_("inbox"))
    opened_at = models.DateTimeField(null=True, blank=True, verbose_name=_("opened at"))
    ruling = models.CharField(max_length=10, choices=ImpeachmentRuling.choices, blank=True, verbose_name=_("ruling"))
    ruled_at = models.DateTimeField(null=True, blank=True, verbose_name=_("ruled at"))
    reason = models.TextField(blank=True, verbose_name=_("reason"))
    new_tribune_user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                         related_name="+", verbose_name=_("new tribune user"))
    public_id = PublicIdField()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("impeachment demand")
        verbose_name_plural = _("impeachment demands")
        constraints = [
            models.UniqueConstraint(fields=["city"], condition=Q(ruled_at__isnull=True),
                                    name="impeachment_one_open_per_city"),
            models.CheckConstraint(condition=Q(ruling="", ruled_at__isnull=True) | (~Q(ruling="") & Q(ruled_at__isnull=False)),
                                   name="impeachment_ruling_with_time"),
            models.CheckConstraint(condition=Q(ruled_at__isnull=True) | Q(opened_at__isnull=False),
                                   name="impeachment_ruled_after_opening"),
            models.CheckConstraint(condition=Q(opened_at__isnull=True) | Q(reached_at__isnull=False),
                                   name="impeachment_opened_after_threshold"),
            models.CheckConstraint(condition=Q(new_tribune_user__isnull=True) | Q(ruling="replace"),
                                   name="impeachment_new_tribune_only_on_replace"),
        ]

    def __str__(self) -> str:
        return f"impeachment of {self.tribune} ({self.created_at:%Y-%m-%d})"


class ImpeachmentSignature(models.Model):
    """One resident's signature under a demand (the initiator signs first). Counted while the signer lives."""

    demand = models.ForeignKey(ImpeachmentDemand, on_delete=models.CASCADE, related_name="signatures",
        verbose_name=_("demand"))
    resident = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="impeachment_signatures",
        verbose_name=_("resident"))
    at = models.DateTimeField(verbose_name=_("at"))

    class Meta:
        verbose_name = _("impeachment signature")
        verbose_name_plural = _("impeachment signatures")
        ordering = ["at", "id"]
        constraints = [models.UniqueConstraint(fields=["demand", "resident"], name="impeachment_one_signature_each")]

    def __str__(self) -> str:
        return f"{self.resident} signs {self.demand_id}"


# --------------------------------------------------------------------------------------------------------------
# The mafia's acknowledgement of their role
# --------------------------------------------------------------------------------------------------------------

class RoleAcknowledgement(models.Model):
    """A mafioso (``resident``) has acknowledged their role. The Consigliere sees who; the
    Procurator only receives the confirmation that everyone did, naming nobody."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="role_acknowledgements",
                             verbose_name=_("game"))
    resident = models.OneToOneField(Resident, on_delete=models.CASCADE, related_name="role_acknowledgement",
                                    verbose_name=_("resident"))
    at = models.DateTimeField(verbose_name=_("at"))

    class Meta:
        verbose_name = _("role acknowledgement")
        verbose_name_plural = _("role acknowledgements")


track_reader_rows(TribuneStandIn)
