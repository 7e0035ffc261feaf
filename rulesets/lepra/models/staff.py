"""Lepra's staff tables: the impeachment of a Tribune (L-IMPEACH-1, L-IMPEACH-2), the mafia's acknowledgement of
their role (L-ASSIGN-4) and complaints of no confidence in the Arbiter or the Consigliere (L-IMPEACH-3). They keep the
table names they had in the engine's ``staff`` and ``sanctions`` apps (``db_table``); every write goes through
``rulesets.lepra.staff_services`` and ``rulesets.lepra.no_confidence_services``."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from cities.models import City, Game, Resident, StaffRole
from kernel.public_ids import PublicIdField

# --------------------------------------------------------------------------------------------------------------
# Impeachment of a Tribune (L-IMPEACH-1, L-IMPEACH-2)
# --------------------------------------------------------------------------------------------------------------

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
        db_table = "staff_impeachmentdemand"
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
        db_table = "staff_impeachmentsignature"
        verbose_name = _("impeachment signature")
        verbose_name_plural = _("impeachment signatures")
        ordering = ["at", "id"]
        constraints = [models.UniqueConstraint(fields=["demand", "resident"], name="impeachment_one_signature_each")]

    def __str__(self) -> str:
        return f"{self.resident} signs {self.demand_id}"


# --------------------------------------------------------------------------------------------------------------
# The mafia's acknowledgement of their role (L-ASSIGN-4)
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
        db_table = "staff_roleacknowledgement"
        verbose_name = _("role acknowledgement")
        verbose_name_plural = _("role acknowledgements")


# --------------------------------------------------------------------------------------------------------------
# No confidence in the Arbiter or the Consigliere (L-IMPEACH-3)
# --------------------------------------------------------------------------------------------------------------

class NoConfidenceTarget(models.TextChoices):
    """Whom a complaint of no confidence is about: residents complain about the Supreme Arbiter,
    the mafia about the Consigliere."""

    ARBITER = "arbiter", _("the Supreme Arbiter")
    CONSIGLIERE = "consigliere", _("the Consigliere")


class NoConfidenceRuling(models.TextChoices):
    """The Procurator's two rulings on a complaint of no confidence."""

    BONUS = "bonus", _("well-founded: bonus granted")
    UNFOUNDED = "unfounded", _("unfounded")


class NoConfidenceCase(models.Model):
    """One complaint of no confidence to the Procurator, with its complaint inbox.

    About the Arbiter: ``complainant`` is the resident who filed it (the Procurator may know residents); the
    inbox (kind ``complaint``) has them as its member. About the Consigliere: filed by "the mafia of ``city``";
    who filed it is NOT stored here (only in an audit row nobody sees while the game runs), the inbox (kind
    ``mafia_compl``) has the city's living mafia as read-only members whose member list the policy hides, and
    their messages are the site's, signed with the city (``staff.no_confidence``). ``ruling`` with ``reason``
    (and ``bonus``, the free text of a granted bonus) closes the case; at most one open case per resident about
    the Arbiter and per city about the Consigliere.
    """

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="no_confidence_cases",
                             verbose_name=_("game"))
    target = models.CharField(max_length=12, choices=NoConfidenceTarget.choices, verbose_name=_("about"))
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="no_confidence_cases",
                             verbose_name=_("city"))
    complainant = models.ForeignKey(Resident, null=True, blank=True, on_delete=models.PROTECT,
                                    related_name="no_confidence_cases", verbose_name=_("complainant"))
    inbox = models.OneToOneField("inboxes.Inbox", on_delete=models.PROTECT, related_name="no_confidence_case",
                                 verbose_name=_("inbox"))
    filed_at = models.DateTimeField(verbose_name=_("filed at"))
    ruling = models.CharField(max_length=10, choices=NoConfidenceRuling.choices, blank=True,
                              verbose_name=_("ruling"))
    ruled_at = models.DateTimeField(null=True, blank=True, verbose_name=_("ruled at"))
    reason = models.TextField(blank=True, verbose_name=_("reason"))
    bonus = models.TextField(blank=True, verbose_name=_("bonus"))
    public_id = PublicIdField()

    class Meta:
        db_table = "sanctions_noconfidencecase"
        ordering = ["-filed_at", "-id"]
        verbose_name = _("complaint of no confidence")
        verbose_name_plural = _("complaints of no confidence")
        constraints = [
            models.CheckConstraint(condition=Q(target="arbiter", complainant__isnull=False)
                                   | Q(target="consigliere", complainant__isnull=True),
                                   name="noconfidence_complainant_only_about_arbiter"),
            models.UniqueConstraint(fields=["complainant"], condition=Q(ruled_at__isnull=True, target="arbiter"),
                                    name="noconfidence_one_open_per_resident"),
            models.UniqueConstraint(fields=["city"], condition=Q(ruled_at__isnull=True, target="consigliere"),
                                    name="noconfidence_one_open_mafia_case_per_city"),
            models.CheckConstraint(condition=Q(ruling="", ruled_at__isnull=True)
                                   | (~Q(ruling="") & Q(ruled_at__isnull=False)),
                                   name="noconfidence_ruling_with_time"),
            models.CheckConstraint(condition=Q(bonus="") | Q(ruling="bonus"), name="noconfidence_bonus_only_granted"),
        ]

    def __str__(self) -> str:
        return f"no confidence in {self.target} ({self.filed_at:%Y-%m-%d})"
