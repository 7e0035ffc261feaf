"""Sanctions beyond one inbox: play bans. Tables and named constraints only; every write goes through
``sanctions.services``.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from cities.models import Game
from kernel.public_ids import PublicIdField

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
