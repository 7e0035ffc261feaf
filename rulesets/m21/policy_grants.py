"""M21's grant tables for the access policy (RULES.md M-SETUP-3/4, L-ARCH-1): the hosts run every inbox of the
game, a spectator reads the game thread and talks in the spectators' thread; what a finished game discloses; where
the eliminated still post (the per-kind tables of ``inboxes.policy_tables``; M21 declares no other). Pure data,
declared by ``M21Ruleset.policy_grants`` and read by ``inboxes.policies`` for M21 games only."""
from __future__ import annotations

from types import MappingProxyType

from rulesets.m21.kinds import M21InboxKind as K
from rulesets.m21.staff_kinds import StaffKind
from inboxes.policies import StaffGrant

#: An M21 game's hosts (its Procurator and co-hosts, M-SETUP-4) run every inbox of the game: the game thread, each
#: role PM, the mafia thread, the spectators' thread and their office. Players get their access from memberships
#: (their seat's state).
HOST_GRANTS = (
    StaffGrant(K.GAME_THREAD, post=True),
    StaffGrant(K.ROLE_PM, post=True),
    StaffGrant(K.MAFIA_THREAD, post=True),
    StaffGrant(K.SPECTATORS, post=True),
    StaffGrant(K.OFFICE, post=True),
)
STAFF_GRANTS = MappingProxyType({StaffKind.HOST: HOST_GRANTS, StaffKind.COHOST: HOST_GRANTS})

#: A spectator (M-SETUP-3: the spectators' thread is "for spectators and eliminated players") reads the game thread
#: and talks in the spectators' thread; never a role PM, the mafia thread or the office. Who is a spectator
#: follows from state (``inboxes.policies.spectator_of``), never from a flag.
SPECTATOR_GRANTS = (StaffGrant(K.GAME_THREAD, post=False), StaffGrant(K.SPECTATORS, post=True))

#: After the game (L-ARCH-1, as the archive page says): the game thread and the spectators' thread are public; the
#: mafia thread and the hosts' office open to any logged-in user who asks. A role PM opens with its player's consent.
PUBLIC_AFTER_GAME = frozenset({K.GAME_THREAD, K.SPECTATORS})
OPEN_ON_REQUEST_AFTER_GAME = frozenset({K.MAFIA_THREAD, K.OFFICE})

#: L-ARCH-2 as the archive page says: a role PM opens after the game with its player's consent.
CONSENT_AFTER_GAME = frozenset({K.ROLE_PM})

#: M-SETUP-3, M-VOTE-6: the eliminated (dead or imprisoned) talk in the spectators' thread and to the hosts in their
#: role PM, never in the game thread nor the mafia thread.
DEAD_POST_KINDS = frozenset({K.SPECTATORS, K.ROLE_PM})
IMPRISONED_POST_KINDS = frozenset({K.SPECTATORS, K.ROLE_PM})

POLICY_GRANTS = MappingProxyType({"staff": STAFF_GRANTS, "spectators": SPECTATOR_GRANTS,
                                  "public_after_game": PUBLIC_AFTER_GAME,
                                  "open_on_request_after_game": OPEN_ON_REQUEST_AFTER_GAME,
                                  "consent_after_game": CONSENT_AFTER_GAME,
                                  "dead_post_kinds": DEAD_POST_KINDS,
                                  "imprisoned_post_kinds": IMPRISONED_POST_KINDS,
                                  # M-SETUP-4: the hosts know every role and alignment; the co-hosts host
                                  # beside the host.
                                  "hosts_know_alignments": True,
                                  "cohost_staff_kinds": (StaffKind.COHOST,)})
