"""The access policy's tables by inbox kind: what each kind allows after the game, to whom by membership state,
and where a seat that is not living may still post. Pure data, read by ``inboxes.policies``; what differs between
rulesets is in each ruleset's ``policy_grants``."""
from __future__ import annotations

from cities.models import StaffKind

from .models import InboxKind, MembershipState

K = InboxKind

#: Kinds disclosed after the game only with consent (given per person, revocable until given): a personal inbox
#: (or role PM) with its resident's consent; a secret inbox when the last of its members (and its staff organizer)
#: consents. Once disclosed they are public, visitors included. The draw's notary is public after the game; any
#: other notary stays closed (its organizer decides, not built).
CONSENT_AFTER_GAME = frozenset({K.PERSONAL, K.SECRET, K.ROLE_PM})

#: Membership states that let a seat read (banned still reads; removed sees nothing, not even the title).
READING_STATES = (MembershipState.MEMBER, MembershipState.BANNED)

#: Staff roles that may organise a secret inbox (anyone but the Consigliere). The staff organizer of
#: a secret inbox reads and posts there (``_secret_organizer_roles``); nobody else's role gives access to one.
SECRET_ORGANIZER_KINDS = frozenset({StaffKind.PROCURATOR, StaffKind.TRIBUNE, StaffKind.ARBITER})

#: Kinds where the Arbiter's penalty ban (a resident banned in named inboxes for a given time) may apply. Only
#: kinds whose membership is no secret: a refusal "not in this inbox" about a mafia inbox, the police station or a
#: secret inbox would tell the Arbiter who is mafia, who is the commissar or who talks to whom.
PENALTY_BAN_KINDS = frozenset({K.CITY, K.PERSONAL, K.CEMETERY, K.STAGE, K.REMOVAL, K.IMPEACHMENT, K.VOTING, K.PRECINCT})

#: Kinds whose member list only their members see while the game runs: the check channel's member is the
#: commissar, whom the Consigliere must not learn; a mafia complaint's members are the mafia of a city, whom the
#: Procurator must not learn. Staff are never members, so no staff page
#: lists them (``can_see_members``, the staff console's memberships).
SECRET_MEMBER_KINDS = frozenset({K.CHECK, K.MAFIA_COMPLAINT})

#: Kinds whose content the knowledge matrix gives to their members alone and that a death leaves the seat in
#: ("content of a secret inbox", "commissar check questions and answers"). Knowledge is dated: while the game
#: runs a dead seat reads one only through a membership it held at its death (``since`` <= ``died_at``) and only
#: the messages received up to its death: an inbox or membership made later and a later message (a new
#: commissar's checks in the city's check channel) never reach it, in all four forms. Other kinds follow their
#: memberships (the dead read their city inbox banned; removed from mafia and police).
DATED_KINDS = frozenset({K.SECRET, K.CHECK})

#: Kinds where only those who vote there post (a message there is a vote, or a nominee's last word): staff read
#: them but speak elsewhere.
VOTE_ONLY_KINDS = frozenset({K.VOTING, K.PRECINCT})

#: Where a seat that is not living may still post, by the seat's state; everywhere else its memberships read at
#: most, whatever a moderator sets (DESIGN.md "State decides, flags don't"). The dead speak among the dead (the
#: cemetery), to their Tribune (their personal inbox) and on a stage the Procurator opens for them (a séance);
#: never in an inbox of the living. A ruleset's special states of a seat out of play (Lepra's
#: spirit) have their own kinds (``policies.SeatStateGrant``). An imprisoned seat (M21) keeps its personal inbox
#: and the stage. In an M21 game the eliminated (dead or imprisoned) talk in the spectators' thread and to the hosts
#: in their role PM, never in the game thread.
DEAD_POST_KINDS = frozenset({K.CEMETERY, K.PERSONAL, K.STAGE, K.SPECTATORS, K.ROLE_PM})
IMPRISONED_POST_KINDS = frozenset({K.PERSONAL, K.STAGE, K.SPECTATORS, K.ROLE_PM})
