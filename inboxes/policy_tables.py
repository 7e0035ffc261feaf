"""The access policy's tables by inbox kind: what each kind allows after the game, to whom by membership state,
and where a seat that is not living may still post (the L-INBOX table, L-ARCH-1/2, L-STAFF-6, L-DEATH-1,
L-SPIRIT-2, M-SETUP-3). Pure data, read by ``inboxes.policies``."""
from __future__ import annotations

from cities.models import StaffKind

from .models import InboxKind, MembershipState

K = InboxKind

#: Kinds disclosed after the game only with consent (L-ARCH-2): a personal inbox with its resident's consent
#: (L-INBOX-5); a secret inbox when the last of its members (and its staff organizer) consents (L-INBOX-13).
#: Once disclosed they are public, visitors included. The draw's notary is public after the game (L-INBOX-12);
#: any other notary stays closed (its organizer decides, not built).
CONSENT_AFTER_GAME = frozenset({K.PERSONAL, K.SECRET, K.ROLE_PM})

#: Membership states that let a seat read (L-INBOX-17: banned still reads; removed sees nothing).
READING_STATES = (MembershipState.MEMBER, MembershipState.BANNED)

#: Staff roles that may organise a secret inbox (L-INBOX-13: anyone but the Consigliere). The staff organizer of
#: a secret inbox reads and posts there (``_secret_organizer_roles``); nobody else's role gives access to one.
SECRET_ORGANIZER_KINDS = frozenset({StaffKind.PROCURATOR, StaffKind.TRIBUNE, StaffKind.ARBITER})

#: Kinds where the Arbiter's penalty ban may apply (L-INBOX-18, L-STAFF-3). Only kinds whose membership is no
#: secret: a refusal "not in this inbox" about a mafia inbox, the police station or a secret inbox would tell
#: the Arbiter who is mafia, who is the commissar or who talks to whom (L-STAFF-6).
PENALTY_BAN_KINDS = frozenset({K.CITY, K.PERSONAL, K.CEMETERY, K.STAGE, K.REMOVAL, K.IMPEACHMENT, K.VOTING, K.PRECINCT})

#: Kinds whose member list only their members see while the game runs: the check channel's member is the
#: commissar, whom the Consigliere must not learn (L-INBOX-15); a mafia complaint's members are the mafia of a
#: city, whom the Procurator must not learn (L-IMPEACH-3, L-STAFF-6). Staff are never members, so no staff page
#: lists them (``can_see_members``, the staff console's memberships).
SECRET_MEMBER_KINDS = frozenset({K.CHECK, K.MAFIA_COMPLAINT})

#: Kinds whose content the knowledge matrix gives to their members alone and that a death leaves the seat in
#: (L-STAFF-6: "content of a secret inbox", "commissar check questions and answers"). Knowledge is dated
#: (L-STAFF-6 [interp]): while the game runs a dead seat reads one only through a membership it held at its death
#: (``since`` <= ``died_at``) and only the messages received up to its death: an inbox or membership made later
#: and a later message (a new commissar's checks in the city's check channel) never reach it, in all four forms.
#: Other kinds follow the L-INBOX table (the dead read their city inbox banned; removed from mafia and police).
DATED_KINDS = frozenset({K.SECRET, K.CHECK})

#: Kinds where only those who vote there post (L-VOTE-3, L-JUDGE-4): staff read them but speak elsewhere.
VOTE_ONLY_KINDS = frozenset({K.VOTING, K.PRECINCT})

#: Where a seat that is not living may still post, by the seat's state; everywhere else its memberships read at
#: most, whatever a moderator sets (DESIGN.md "State decides, flags don't"). The dead (L-DEATH-1) speak among the
#: dead (the cemetery), to their Tribune (their personal inbox) and on a stage the Procurator opens for them (a
#: séance, L-INBOX-19); never in an inbox of the living. A ruleset's special states of a seat out of play (Lepra's
#: spirit) have their own kinds (``policies.SeatStateGrant``). An imprisoned seat (M21) keeps its personal inbox
#: and the stage. In an M21 game the eliminated (dead or imprisoned) talk in the spectators' thread and to the hosts
#: in their role PM (M-SETUP-3, M-VOTE-6).
DEAD_POST_KINDS = frozenset({K.CEMETERY, K.PERSONAL, K.STAGE, K.SPECTATORS, K.ROLE_PM})
IMPRISONED_POST_KINDS = frozenset({K.PERSONAL, K.STAGE, K.SPECTATORS, K.ROLE_PM})
