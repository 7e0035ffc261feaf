"""Services of sanctions: play bans, with the scheduler's ``play_ban_end`` handler and the sign-up guard (both
registered by ``SanctionsConfig.ready``).

Every ``do_`` function is one transaction that checks the rules, writes its ``GameEvent`` audit row and raises a
``kernel.errors.RuleViolation`` subclass with a readable message, changing nothing when refused.
"""
from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from django.core.mail import send_mail
from django.db import transaction
from django.utils import timezone, translation
from django.utils.formats import date_format
from django.utils.translation import gettext as _

from cities.models import HOST_STAFF_KIND, Game, ScheduledEvent
from cities.staff_kinds import host_label
from inboxes import policies, viewer_reads
from inboxes.models import Message
from inboxes.rendering import has_visible_text
from kernel.audit import record_event
from kernel.errors import InvalidInput, NotAllowed, WrongState
from kernel.rulesets import rule_id

from .models import PlayBan, PlayBanEvidence, PlayBanOffence

#: The longest play-ban description or reason, in characters.
MAX_TEXT_LENGTH = 2000

#: The staff kinds that record play bans in their game: the host (a Procurator, or a Host, say).
PLAY_BAN_RECORDERS = (HOST_STAFF_KIND,)


def _in_language(game: Game, text_fn):
    with translation.override(game.language):
        return text_fn()


def _clean(text: str, *, what: str, required: bool = True, limit: int = MAX_TEXT_LENGTH) -> str:
    text = (text or "").strip()
    if required and not has_visible_text(text):
        raise InvalidInput(_("The %(what)s is empty.") % {"what": what})
    if len(text) > limit:
        raise InvalidInput(_("The %(what)s is too long: %(length)d characters, at most %(max)d.")
                           % {"what": what, "length": len(text), "max": limit})
    return text


def _mail(user, subject: str, body: str) -> None:
    """Send one e-mail after the transaction commits (nothing is sent for a rolled-back change)."""
    if user is not None and user.email:
        transaction.on_commit(lambda: send_mail(subject, body, None, [user.email]))


# --------------------------------------------------------------------------------------------------------------
# Play bans
# --------------------------------------------------------------------------------------------------------------

def running_play_bans(now: datetime | None = None):
    """The play bans running at ``now`` (aware UTC): started, not yet ended by their time (``ends_at`` None = for
    life), not lifted before ``now``. Decided by the times alone, however late the scheduler records the end. A
    QuerySet, the longest first (for life, then the latest end)."""
    from django.db.models import F, Q

    now = now or timezone.now()
    return (PlayBan.objects.filter(starts_at__lte=now).filter(Q(ends_at__isnull=True) | Q(ends_at__gt=now))
            .filter(Q(lifted_at__isnull=True) | Q(lifted_at__gt=now))
            .select_related("user", "game").order_by(F("ends_at").desc(nulls_first=True), "-id"))


def running_play_ban_of(user, now: datetime | None = None) -> PlayBan | None:
    """The running play ban of ``user`` that ends last (None when they may sign up)."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    return running_play_bans(now).filter(user=user).first()


def play_ban_sentence(ban: PlayBan, zone: str) -> str:
    """What the banned player is told, in the active language: the offence, the description and until when
    (wall clock in ``zone``, an IANA name) or "for life"."""
    if ban.ends_at is None:
        text = _("You are banned from playing for life: %(offence)s.") % {"offence": ban.get_offence_display()}
    else:
        until = date_format(timezone.localtime(ban.ends_at, ZoneInfo(zone)), "DATETIME_FORMAT")
        text = (_("You are banned from playing until %(until)s (%(zone)s): %(offence)s.")
                % {"until": until, "zone": zone, "offence": ban.get_offence_display()})
    return f"{text} {ban.description}"


def check_may_sign_up(user, game: Game, now: datetime | None = None) -> None:
    """Raise ``NotAllowed`` with the reason and the end date when a play ban of ``user`` runs at ``now``
    (no sign-up for new games); the reason is in ``game``'s language and the date in its time zone,
    whatever language happens to be active where the sign-up runs."""
    ban = running_play_ban_of(user, now)
    if ban is not None:
        raise NotAllowed(_in_language(game, lambda: play_ban_sentence(ban, game.time_zone)),
                         rule=rule_id(game, "play_ban"))


def play_ban_seating_refusal(user, game: Game, now: datetime) -> str | None:
    """The seating guard of play bans (``cities.recruitment_services.SEATING_GUARDS``): a player
    banned at ``now``, though signed up before the ban, is not seated in ``game`` when its cities are formed.
    Returns why, for the Procurator, in ``game``'s language (the offence and the end, never the description or
    the evidence: the public list's facts), or None."""
    ban = running_play_ban_of(user, now)
    if ban is None:
        return None

    def text():
        if ban.ends_at is None:
            return (_("%(name)s is not seated: banned from playing for life (%(offence)s).")
                    % {"name": user.public_name, "offence": ban.get_offence_display()})
        until = date_format(timezone.localtime(ban.ends_at, ZoneInfo(game.time_zone)), "DATETIME_FORMAT")
        return (_("%(name)s is not seated: banned from playing until %(until)s (%(zone)s) (%(offence)s).")
                % {"name": user.public_name, "until": until, "zone": game.time_zone,
                   "offence": ban.get_offence_display()})
    return _in_language(game, text)


def players_of(game: Game):
    """The accounts that played in ``game``: the holders of its seats now and anyone who wrote there from a seat
    (a replaced player). A User QuerySet."""
    from django.contrib.auth import get_user_model
    from django.db.models import Q

    User = get_user_model()
    wrote = Message.objects.filter(inbox__game=game, author_resident__isnull=False).values("author_user")
    return User.objects.filter(Q(seats__game=game) | Q(pk__in=wrote)).distinct()


@transaction.atomic
def do_record_play_ban(game: Game, user, offence: str, description: str, *, ends_at: datetime | None,
                       evidence, acting_user, now: datetime | None = None) -> PlayBan:
    """The Procurator (a ruleset's Host) of ``game``, the game of the offence, bans ``user`` from playing from ``now``
    until ``ends_at`` (aware UTC, in the future) or for life (None), for ``offence`` (breaking omertà, forgery)
    described in ``description``, with ``evidence``: messages of the game he may read now
    (``policies.readable_messages``), at least one. While it runs the player cannot sign up for new games; they are told
    by e-mail why and until when; the scheduler records the end (``play_ban_end``).

    Returns the PlayBan. Raises ``NotAllowed`` (not the game's Procurator), ``InvalidInput`` (not a player of the
    game, oneself, unknown offence, empty description, an end not in the future or naive, no evidence, a message
    of another game or one he may not read).
    """
    now = now or timezone.now()
    if acting_user is None or not any(policies.holds_role(acting_user, game, kind) for kind in PLAY_BAN_RECORDERS):
        raise NotAllowed(_("Only the %(host)s of the game of the offence records a play ban.")
                         % {"host": host_label(game)}, rule=rule_id(game, "play_ban"))
    if user is None or user.pk == acting_user.pk or not players_of(game).filter(pk=user.pk).exists():
        raise InvalidInput(_("A play ban is recorded for a player of this game."), rule=rule_id(game, "play_ban"))
    if offence not in PlayBanOffence.values:
        raise InvalidInput(_("Choose the offence: breaking omertà or forgery."), rule=rule_id(game, "play_ban_offence"))
    description = _clean(description, what=_("description"))
    if ends_at is not None:
        if ends_at.tzinfo is None:
            raise InvalidInput(_("Times must carry a time zone."))
        if ends_at <= now:
            raise InvalidInput(_("The end of a play ban must be in the future."), rule=rule_id(game, "play_ban"))
    messages = list(dict.fromkeys(evidence or ()))
    if not messages:
        raise InvalidInput(_("Give at least one message as evidence."), rule=rule_id(game, "play_ban"))
    viewer_reads.forget_viewer_cache(acting_user)
    readable = set(policies.readable_messages(acting_user, Message.objects.filter(
        pk__in=[m.pk for m in messages], inbox__game=game)).values_list("pk", flat=True))
    if any(m.pk not in readable for m in messages):
        raise InvalidInput(_("Evidence must be messages of this game that you may read."),
                           rule=rule_id(game, "play_ban"))
    ban = PlayBan.objects.create(game=game, user=user, offence=offence, description=description, starts_at=now,
                                 ends_at=ends_at, recorded_by=acting_user)
    PlayBanEvidence.objects.bulk_create([PlayBanEvidence(ban=ban, message=m) for m in messages])
    if ends_at is not None:
        ScheduledEvent.objects.create(game=game, kind="play_ban_end", due_at=ends_at, payload={"ban": ban.pk},
                                      created_at=now)
    record_event(game, "play_ban.recorded", actor=acting_user, at=now,
                 payload={"ban": ban.pk, "user": user.pk, "offence": offence, "evidence": len(messages),
                          "until": ends_at.isoformat() if ends_at else None})
    _mail(user, _in_language(game, lambda: _("Mafia Host: you are banned from playing")),
          _in_language(game, lambda: play_ban_sentence(ban, game.time_zone)))
    return ban


@transaction.atomic
def do_record_play_ban_end(ban: PlayBan, *, acting_user=None, now: datetime | None = None) -> PlayBan:
    """The scheduler records that ``ban`` has run out (``ended_at``) and tells the player. The ban
    stopped counting at ``ends_at`` already, whatever the time this runs. Scheduler only. Raises ``NotAllowed``
    for a user, ``WrongState`` for a ban for life or one not yet over (an end already recorded is left)."""
    now = now or timezone.now()
    if acting_user is not None:
        raise NotAllowed(_("Only the site records the end of a play ban."))
    ban = PlayBan.objects.select_for_update(of=("self",)).select_related("game", "user").get(pk=ban.pk)
    if ban.ends_at is None or ban.ends_at > now:
        raise WrongState(_("This play ban is not over."), rule=rule_id(ban.game, "play_ban"))
    if ban.ended_at is None:
        ban.ended_at = now
        ban.save(update_fields=["ended_at"])
        record_event(ban.game, "play_ban.ended", actor=None, at=now,
                     payload={"ban": ban.pk, "user": ban.user_id, "until": ban.ends_at.isoformat()})
        _mail(ban.user, _in_language(ban.game, lambda: _("Mafia Host: your play ban is over")),
              _in_language(ban.game, lambda: _("Your play ban is over: you may sign up for new games again.")))
    return ban


@transaction.atomic
def do_lift_play_ban(ban: PlayBan, *, reason: str, acting_user, now: datetime | None = None) -> PlayBan:
    """Whoever may record ``ban`` (the Procurator, a ruleset's Host, of the game of the offence) lifts it early with
    ``reason``: it stops running at ``now``, its scheduled end is cancelled, the player is told by e-mail; audited
    (``play_ban.lifted``). Returns the PlayBan. Raises ``NotAllowed`` (not a recorder of that game), ``InvalidInput``
    (empty or long reason) or ``WrongState`` (not running: over or lifted already)."""
    now = now or timezone.now()
    ban = PlayBan.objects.select_for_update(of=("self",)).select_related("game", "user").get(pk=ban.pk)
    game = ban.game
    if acting_user is None or not any(policies.holds_role(acting_user, game, kind) for kind in PLAY_BAN_RECORDERS):
        raise NotAllowed(_("Only the %(host)s of the game of the offence lifts a play ban.")
                         % {"host": host_label(game)}, rule=rule_id(game, "play_ban"))
    reason = _clean(reason, what=_("reason"))
    if ban.lifted_at is not None:
        raise WrongState(_("This play ban was lifted already."), rule=rule_id(game, "play_ban"))
    if ban.ends_at is not None and ban.ends_at <= now:
        raise WrongState(_("This play ban is over already."), rule=rule_id(game, "play_ban"))
    ban.lifted_at, ban.lifted_by, ban.lift_reason = now, acting_user, reason
    fields = ["lifted_at", "lifted_by", "lift_reason"]
    if ban.ended_at is None:
        ban.ended_at = now
        fields.append("ended_at")
    ban.save(update_fields=fields)
    ScheduledEvent.objects.filter(game=game, kind="play_ban_end", payload__ban=ban.pk, done_at__isnull=True,
                                  cancelled_at__isnull=True).update(cancelled_at=now)
    record_event(game, "play_ban.lifted", actor=acting_user, at=now,
                 payload={"ban": ban.pk, "user": ban.user_id, "reason": reason})
    _mail(ban.user, _in_language(game, lambda: _("Mafia Host: your play ban is lifted")),
          _in_language(game, lambda: _("Your play ban is lifted: you may sign up for new games again. %(reason)s")
                       % {"reason": reason}))
    return ban


def play_ban_end_handler(event: ScheduledEvent, now: datetime) -> str:
    """The scheduler's ``play_ban_end`` handler: record the end of the play ban ``payload["ban"]``. Registered by
        ``SanctionsConfig.ready``."""
    ban = PlayBan.objects.get(pk=event.payload["ban"])
    do_record_play_ban_end(ban, acting_user=None, now=now)
    return f"play ban {ban.pk} is over"


__all__ = [
    "MAX_TEXT_LENGTH", "PLAY_BAN_RECORDERS", "check_may_sign_up", "do_lift_play_ban", "do_record_play_ban",
    "do_record_play_ban_end",
    "play_ban_end_handler", "play_ban_seating_refusal", "play_ban_sentence", "players_of", "running_play_ban_of", "running_play_bans",
]
