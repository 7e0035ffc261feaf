"""What a thread page offers its viewer besides the messages (links and buttons), decided by the access policy
(``inboxes.policies``): leaving a secret inbox, the nomination link, the night link, whether authors are named;
and what "my inboxes" offers: opening a secret inbox.
"""
from __future__ import annotations

from cities.models import Game, GameStatus, LifeStatus
from kernel.rulesets import ruleset_of

from .models import Inbox
from .policies import _is_authenticated, membership_of, seat_in, staff_roles_in
from .policy_tables import kinds_of


def can_leave_inbox(user, inbox: Inbox) -> bool:
    """Whether the thread page offers ``user`` to leave ``inbox``: a member of an inbox of a kind its ruleset lets
    members leave (``leavable_kinds``: a secret inbox, say)."""
    return (_is_authenticated(user) and inbox.kind in kinds_of(inbox.game, "leavable_kinds")
            and membership_of(user, inbox) is not None)


def offers_nomination_link(user, inbox: Inbox) -> bool:
    """Whether the thread page links ``user`` to the nomination page: a member of an inbox of a kind its ruleset
    declares ``nomination_link_kinds`` (a personal inbox where proxy requests and nominations are
    written, say)."""
    return (_is_authenticated(user) and inbox.kind in kinds_of(inbox.game, "nomination_link_kinds")
            and membership_of(user, inbox) is not None)


def names_message_authors(inbox: Inbox) -> bool:
    """False in the kinds its ruleset declares ``unnamed_author_kinds`` (a commissar's check channel: its readers, the
    Consigliere among them, see "commissar" or the staff role, never the asker's name); True everywhere else."""
    return inbox.kind not in kinds_of(inbox.game, "unnamed_author_kinds")


def links_night_page(inbox: Inbox) -> bool:
    """Whether the thread links to the night page: in the kinds its ruleset declares ``night_page_kinds`` (a
    mafia inbox or a check channel, where the night's business is discussed)."""
    return inbox.kind in kinds_of(inbox.game, "night_page_kinds")


def offers_secret_inbox(user, game: Game) -> bool:
    """Whether the pages of ``game`` offer ``user`` to open a secret inbox: only where the game's
    ruleset has them (``RulesetSpec.opened_secret_kind``; a ruleset without them never), while the game is not
    over, to a living seat or a staff member who may organise one (never a holder of a ``secret_barred_staff``
    kind, nor a spectator). ``do_create_secret_inbox`` decides again when the form is sent."""
    if not _is_authenticated(user) or game.status == GameStatus.FINISHED:
        return False
    if ruleset_of(game).opened_secret_kind() is None:
        return False
    roles = staff_roles_in(user, game)
    barred = kinds_of(game, "secret_barred_staff")
    if any(r.kind in barred for r in roles):
        return False
    seat = seat_in(user, game)
    if seat is not None:
        return seat.status == LifeStatus.ALIVE
    return any(r.kind in kinds_of(game, "secret_organizers") for r in roles)
