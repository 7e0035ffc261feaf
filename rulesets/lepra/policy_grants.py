"""Lepra's grant tables for the access policy (RULES.md L-INBOX table, L-STAFF-1..4, L-STAFF-6, L-ARCH-1): what
each staff role may read and post while the game runs, by inbox kind, and what a finished game discloses. Pure data, declared by ``LepraRuleset.policy_grants``
and read by ``inboxes.policies`` for Lepra games only."""
from __future__ import annotations

from types import MappingProxyType

from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from cities.models import StaffKind
from inboxes.models import InboxKind as K
from inboxes.policies import SeatStateGrant, StaffGrant

#: The staff side of the L-INBOX table and of L-STAFF-1..4 / L-STAFF-6, while the game runs.
#: The Procurator reads what the game's hosting needs but never a mafia inbox, a personal inbox, a secret inbox,
#: the notary or the check channel (L-STAFF-1, L-STAFF-5, L-STAFF-6). A Tribune runs their city's inbox, personal
#: and voting inboxes (L-INBOX-1, -5, -9). The Arbiter runs the court and the precincts and reads the voting
#: inboxes whose results reach him (L-STAFF-3, L-VOTE-6). The Consigliere organises the mafia inboxes, sits in the
#: bar and answers the check channel (L-STAFF-4, L-INBOX-4, -8, -15) and may not join secret inboxes.
STAFF_GRANTS = MappingProxyType({
    StaffKind.PROCURATOR: (
        StaffGrant(K.CITY, post=False),
        StaffGrant(K.COURT, post=False),
        StaffGrant(K.VOTING, post=False),
        StaffGrant(K.PRECINCT, post=False),
        StaffGrant(K.REMOVAL, post=False),
        StaffGrant(K.POLICE, post=True),
        StaffGrant(K.CEMETERY, post=True),
        StaffGrant(K.OFFICE, post=True),
        StaffGrant(K.BAR, post=True),
        StaffGrant(K.IMPEACHMENT, post=True),
        StaffGrant(K.STAGE, post=True),
        # L-IMPEACH-3: complaints of no confidence are made to the Procurator, who answers there.
        StaffGrant(K.COMPLAINT, post=True),
        StaffGrant(K.MAFIA_COMPLAINT, post=True),
    ),
    StaffKind.TRIBUNE: (
        StaffGrant(K.CITY, post=True, own_city=True),
        StaffGrant(K.PERSONAL, post=True, own_city=True),
        # Reads the voting inboxes he runs, never posts there: a voting inbox takes only votes (L-VOTE-3).
        StaffGrant(K.VOTING, post=False, own_city=True),
        StaffGrant(K.OFFICE, post=True),
        # L-IMPEACH-2: the Procurator "hears the Tribune" in the impeachment inbox of the Tribune's city.
        StaffGrant(K.IMPEACHMENT, post=True, own_city=True),
    ),
    StaffKind.ARBITER: (
        StaffGrant(K.COURT, post=True),
        StaffGrant(K.OFFICE, post=True),
        # Runs the precincts but never posts there: a precinct takes only ballots (L-JUDGE-4).
        StaffGrant(K.PRECINCT, post=False),
        StaffGrant(K.VOTING, post=False),
    ),
    StaffKind.CONSIGLIERE: (
        StaffGrant(K.MAFIA, post=True),
        StaffGrant(K.BAR, post=True),
        StaffGrant(K.CHECK, post=True),
    ),
})

#: Staff grants that hold only for inboxes matching a condition, as (staff kind, grant, ``Q`` over Inbox): the
#: Arbiter is added to a judge removal demand once it is valid (L-INBOX-11, L-JUDGE-8: ``RemovalDemand.valid_at``).
CONDITIONAL_STAFF_GRANTS = (
    (StaffKind.ARBITER, StaffGrant(K.REMOVAL, post=True), Q(removal_demand__valid_at__isnull=False)),
)

#: The L-INBOX table's "after the game" column (L-ARCH-1): the kinds public to everyone once the game ends (the
#: complaints too, L-IMPEACH-3: "the whole exchange is disclosed after the game"), and those open to any logged-in
#: user who asks by one logged click (an ``archive.OpenRequest`` row); a visitor never.
PUBLIC_AFTER_GAME = frozenset({K.CITY, K.COURT, K.POLICE, K.CEMETERY, K.VOTING, K.PRECINCT, K.REMOVAL,
                               K.IMPEACHMENT, K.CHECK, K.STAGE, K.COMPLAINT, K.MAFIA_COMPLAINT})
OPEN_ON_REQUEST_AFTER_GAME = frozenset({K.MAFIA, K.OFFICE, K.BAR})

#: A spirit (L-SPIRIT-2, ``LepraRuleset.seat_state``) votes in its city's voting inboxes that day and keeps its
#: personal inbox and the stage, but is banned in the city inbox and is not in the cemetery.
SEAT_STATES = MappingProxyType({
    "spirit": SeatStateGrant(
        post_kinds=frozenset({K.VOTING, K.PERSONAL, K.STAGE}), own_city_kinds=frozenset({K.VOTING}),
        denial=_("A spirit only votes in the voting inboxes of its city today."),
        moderation=_("%(name)s is a spirit: their place in this inbox follows from that, and no moderation "
                     "action changes it.")),
})

POLICY_GRANTS = MappingProxyType({"staff": STAFF_GRANTS, "conditional_staff": CONDITIONAL_STAFF_GRANTS,
                                  "public_after_game": PUBLIC_AFTER_GAME,
                                  "open_on_request_after_game": OPEN_ON_REQUEST_AFTER_GAME,
                                  "seat_states": SEAT_STATES})
