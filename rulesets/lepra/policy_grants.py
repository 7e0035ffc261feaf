"""Lepra's grant tables for the access policy (RULES.md L-INBOX table, L-STAFF-1..4, L-STAFF-6, L-ARCH-1): what
each staff role may read and post while the game runs, by inbox kind, what a finished game discloses, and the
per-kind tables of ``inboxes.policy_tables`` (who posts where, what is dated, immutable or never rolled over). Pure
data, declared by ``LepraRuleset.policy_grants`` and read by ``inboxes.policies`` for Lepra games only."""
from __future__ import annotations

from types import MappingProxyType

from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from rulesets.lepra.kinds import LepraInboxKind as K
from rulesets.lepra.staff_kinds import StaffKind
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

#: L-INBOX-5, L-INBOX-13, L-ARCH-2: a personal inbox opens after the game with its resident's consent, a secret inbox
#: once the last of its members (and its staff organizer) consents. The draw's notary is public after the game
#: (L-INBOX-12); any other notary stays closed (its organizer decides, not built).
CONSENT_AFTER_GAME = frozenset({K.PERSONAL, K.SECRET})

#: L-INBOX-13: anyone but the Consigliere organises a secret inbox; the staff who may are these, a holder of several
#: roles organising as the first.
SECRET_ORGANIZERS = (StaffKind.PROCURATOR, StaffKind.ARBITER, StaffKind.TRIBUNE)

#: L-INBOX-18: where the Arbiter's penalty ban may apply: only kinds whose membership is no secret. A refusal "not in
#: this inbox" about a mafia inbox, the police station or a secret inbox would tell the Arbiter who is mafia, who is
#: the commissar or who talks to whom (L-STAFF-6).
PENALTY_BAN_KINDS = frozenset({K.CITY, K.PERSONAL, K.CEMETERY, K.STAGE, K.REMOVAL, K.IMPEACHMENT, K.VOTING,
                               K.PRECINCT})

#: L-STAFF-6: the check channel's member is the commissar, whom the Consigliere must not learn (L-INBOX-15); a mafia
#: complaint's members are the mafia of a city, whom the Procurator must not learn (L-IMPEACH-3).
SECRET_MEMBER_KINDS = frozenset({K.CHECK, K.MAFIA_COMPLAINT})

#: L-STAFF-6 ("content of a secret inbox", "commissar check questions and answers"), L-INBOX-13, L-INBOX-15: a death
#: leaves the seat in these as they were at its death. Other kinds follow their memberships (the dead read their
#: city inbox banned, L-INBOX-1; removed from the mafia inbox and the police station, L-INBOX-3, -4).
DATED_KINDS = frozenset({K.SECRET, K.CHECK})

#: L-VOTE-3, L-JUDGE-4: a message in a voting inbox or a precinct is a vote (or a nominee's last word); staff read
#: them but speak elsewhere.
VOTE_ONLY_KINDS = frozenset({K.VOTING, K.PRECINCT})

#: L-DEATH-1, L-INBOX-5, L-INBOX-6, L-INBOX-19: the dead speak among the dead (the cemetery), to their Tribune (their
#: personal inbox) and on a stage the Procurator opens for them (a séance); never in an inbox of the living. No
#: Lepra rule imprisons a seat; were one imprisoned it would keep its personal inbox and the stage.
DEAD_POST_KINDS = frozenset({K.CEMETERY, K.PERSONAL, K.STAGE})
IMPRISONED_POST_KINDS = frozenset({K.PERSONAL, K.STAGE})

#: L-INBOX-9, L-INBOX-10: a vote lives in one voting inbox or precinct, never rolled over. L-INBOX-6, L-INBOX-19: a
#: rollover does not ban the dead in the cemetery (its members) nor on a stage (the Procurator's chosen speakers, a
#: dead one included).
NO_ROLLOVER_KINDS = frozenset({K.VOTING, K.PRECINCT})
ROLLOVER_KEEPS_DEAD_KINDS = frozenset({K.CEMETERY, K.STAGE})

#: L-INBOX-21: votes in voting inboxes and precincts and the court's votes (the court inbox is where the judges
#: vote) are never edited or deleted, nor the check channel's questions, answered at once (L-INBOX-15).
IMMUTABLE_KINDS = frozenset({K.VOTING, K.PRECINCT, K.COURT, K.CHECK})

#: L-INBOX-15, L-NIGHT-5: the check channel's readers see the asker as "commissar" (or the staff role), never a name.
UNNAMED_AUTHOR_KINDS = frozenset({K.CHECK})

#: L-NIGHT-1..5: the night's business (the kill, the godfather, the check) is discussed in the mafia inbox and the
#: check channel, whose pages link to the night page.
NIGHT_PAGE_KINDS = frozenset({K.MAFIA, K.CHECK})

#: L-NOMINATE (proxy requests and nominations are written in the personal inbox): its page links to the nomination
#: page. L-INBOX-13: a member may leave a secret inbox, and its staff organizer reads, posts and consents there.
NOMINATION_LINK_KINDS = frozenset({K.PERSONAL})
LEAVABLE_KINDS = frozenset({K.SECRET})
ORGANIZED_KINDS = frozenset({K.SECRET})

#: The archive's map of the game (L-ARCH) leaves out the inboxes of one seat each: personal, voting, precinct.
MAP_HIDDEN_KINDS = frozenset({K.PERSONAL, K.VOTING, K.PRECINCT})

#: L-INBOX-13: the Consigliere neither opens nor takes part in a secret inbox.
SECRET_BARRED_STAFF = frozenset({StaffKind.CONSIGLIERE})

#: L-INBOX-12: the draw's notary is public after the game; any other notary stays closed.
DRAW_RECORD_KINDS = frozenset({K.NOTARY})

#: L-IMPEACH-3: the mafia write their complaint on the complaint page, signed "the mafia of city C", never a name.
COMPLAINT_PAGE_KINDS = frozenset({K.MAFIA_COMPLAINT})

#: The staff tables of ``cities.staff_kinds``: a Tribune is appointed for one city and runs it, and Tribunes stand in
#: for each other (L-STAFF-2: the Procurator grants one another city's Tribune powers for a period,
#: ``staff.services.do_grant_stand_in``); the Supreme Arbiter runs the court, the penalty bans and the judges'
#: election (L-STAFF-3, L-INBOX-18); who the Consigliere is stays a secret known to the Procurator and the mafia
#: (L-STAFF-4, L-STAFF-6), and the Consigliere knows every alignment and the night business of every city
#: (L-STAFF-4, L-NIGHT).
CITY_STAFF_KINDS = (StaffKind.TRIBUNE,)
COURT_STAFF_KINDS = (StaffKind.ARBITER,)
SECRET_STAFF_KINDS = (StaffKind.CONSIGLIERE,)
NIGHT_STAFF_KINDS = (StaffKind.CONSIGLIERE,)

POLICY_GRANTS = MappingProxyType({"staff": STAFF_GRANTS, "conditional_staff": CONDITIONAL_STAFF_GRANTS,
                                  "public_after_game": PUBLIC_AFTER_GAME,
                                  "open_on_request_after_game": OPEN_ON_REQUEST_AFTER_GAME,
                                  "seat_states": SEAT_STATES,
                                  "consent_after_game": CONSENT_AFTER_GAME,
                                  "secret_organizers": SECRET_ORGANIZERS,
                                  "penalty_ban_kinds": PENALTY_BAN_KINDS,
                                  "secret_member_kinds": SECRET_MEMBER_KINDS,
                                  "dated_kinds": DATED_KINDS,
                                  "vote_only_kinds": VOTE_ONLY_KINDS,
                                  "dead_post_kinds": DEAD_POST_KINDS,
                                  "imprisoned_post_kinds": IMPRISONED_POST_KINDS,
                                  "no_rollover_kinds": NO_ROLLOVER_KINDS,
                                  "rollover_keeps_dead_kinds": ROLLOVER_KEEPS_DEAD_KINDS,
                                  "immutable_kinds": IMMUTABLE_KINDS,
                                  "unnamed_author_kinds": UNNAMED_AUTHOR_KINDS,
                                  "night_page_kinds": NIGHT_PAGE_KINDS,
                                  "nomination_link_kinds": NOMINATION_LINK_KINDS,
                                  "leavable_kinds": LEAVABLE_KINDS,
                                  "organized_kinds": ORGANIZED_KINDS,
                                  "secret_barred_staff": SECRET_BARRED_STAFF,
                                  "map_hidden_kinds": MAP_HIDDEN_KINDS,
                                  "draw_record_kinds": DRAW_RECORD_KINDS,
                                  "complaint_page_kinds": COMPLAINT_PAGE_KINDS,
                                  "city_staff_kinds": CITY_STAFF_KINDS,
                                  "court_staff_kinds": COURT_STAFF_KINDS,
                                  "secret_staff_kinds": SECRET_STAFF_KINDS,
                                  "night_staff_kinds": NIGHT_STAFF_KINDS})
