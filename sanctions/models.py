"""Sanctions beyond one inbox: complaints of no confidence in the Arbiter or the Consigliere
and play bans. Tables and named constraints only; every write goes through
``sanctions.services``; complaint inboxes are read through ``inboxes.policies`` like every inbox.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from cities.models import City, Game, Resident
from kernel.public_ids import PublicIdField

# --------------------------------------------------------------------------------------------------------------
# No confidence in the Arbiter or the Consigliere
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


# --------------------------------------------------------------------------------------------------------------
# Play bans
# --------------------------------------------------------------------------------------------------------------

class PlayBanOffence(models.TextChoices):
    """The offences punished by a play ban."""

    OMERTA = "omerta", _("breaking omertà")
    FORGERY = "forgery", _("forged copy-pastes or screenshots")


class PlayBan(models.Model):
    """A ban from playing: while it runs (``starts_at`` ≤ now < ``ends_at``, or for life when
    ``ends_at`` is None, and before ``lifted_at`` when the recorder lifted it early, with ``lift_reason``)
    ``user`` cannot sign up for new games, nor be seated from an earlier sign-up.

    Recorded by the Procurator (a ruleset's Host) of ``game``, the game of the offence, with ``offence`` and
    ``description`` and evidence (``PlayBanEvidence``: messages he may read). Whether a ban runs is decided by
    the time, never by a flag: the scheduler's ``play_ban_end`` event only records the end (``ended_at``) and
    tells the player. The public list shows the name, the offence kind and the end, never the evidence.
    """

    game = models.ForeignKey(Game, on_delete=models.PROTECT, related_name="play_bans", verbose_name=_("game"))
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="play_bans",
                             verbose_name=_("player"))
    offence = models.CharField(max_length=10, choices=PlayBanOffence.choices, verbose_name=_("offence"))
    description = models.TextField(verbose_name=_("description"))
    starts_at = models.DateTimeField(verbose_name=_("from"))
    ends_at = models.DateTimeField(null=True, blank=True, verbose_name=_("until"))
    recorded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+",
                                    verbose_name=_("recorded by"))
    ended_at = models.DateTimeField(null=True, blank=True, verbose_name=_("end recorded at"))
    lifted_at = models.DateTimeField(null=True, blank=True, verbose_name=_("lifted at"))
    lifted_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="+", verbose_name=_("lifted by"))
    lift_reason = models.TextField(blank=True, default="", db_default="", verbose_name=_("why lifted"))
    public_id = PublicIdField()

    class Meta:
        ordering = ["-starts_at", "-id"]
        verbose_name = _("play ban")
        verbose_name_plural = _("play bans")
        constraints = [
            models.CheckConstraint(condition=Q(ends_at__isnull=True) | Q(ends_at__gt=F("starts_at")),
                                   name="playban_ends_after_start"),
            models.CheckConstraint(condition=Q(lifted_at__isnull=True, lift_reason="")
                                   | (Q(lifted_at__isnull=False) & ~Q(lift_reason="")),
                                   name="playban_lifted_with_reason"),
        ]
        indexes = [models.Index(fields=["user", "ends_at"], name="playban_user_end_idx")]

    def __str__(self) -> str:
        return f"play ban of {self.user_id} ({self.get_offence_display()})"


class PlayBanEvidence(models.Model):
    """One message given as evidence of a play ban's offence; one the recorder could read."""

    ban = models.ForeignKey(PlayBan, on_delete=models.CASCADE, related_name="evidence", verbose_name=_("play ban"))
    message = models.ForeignKey("inboxes.Message", on_delete=models.PROTECT, related_name="+",
                                verbose_name=_("message"))

    class Meta:
        verbose_name = _("evidence")
        verbose_name_plural = _("evidence")
        constraints = [models.UniqueConstraint(fields=["ban", "message"], name="playban_evidence_once")]
