"""What a thread page offers its viewer besides the messages (links and buttons), decided by the access policy
(``inboxes.policies``): leaving a secret inbox, the nomination link, the night link,
whether authors are named.
"""
from __future__ import annotations

from .models import Inbox, InboxKind
from .policies import _is_authenticated, membership_of


def can_leave_inbox(user, inbox: Inbox) -> bool:
    """Whether the thread page offers ``user`` to leave ``inbox``: a member of a secret inbox (L-INBOX-13)."""
    return (_is_authenticated(user) and inbox.kind == InboxKind.SECRET
            and membership_of(user, inbox) is not None)


def offers_nomination_link(user, inbox: Inbox) -> bool:
    """Whether the thread page links ``user`` to the nomination page: in their own personal inbox, where proxy
    requests and nominations are written (L-INBOX-5, L-NOM-1, L-NOM-6)."""
    return (_is_authenticated(user) and inbox.kind == InboxKind.PERSONAL
            and membership_of(user, inbox) is not None)


def names_message_authors(inbox: Inbox) -> bool:
    """False in a commissar's check channel (L-INBOX-15, L-NIGHT-5): its readers (the Consigliere among them) see
    "commissar" or the staff role, never the asker's name; True everywhere else."""
    return inbox.kind != InboxKind.CHECK


def links_night_page(inbox: Inbox) -> bool:
    """Whether the thread links to the night page: the mafia inbox and the check channel, where the night's
    business is discussed (L-INBOX-4, L-INBOX-15)."""
    return inbox.kind in (InboxKind.MAFIA, InboxKind.CHECK)
