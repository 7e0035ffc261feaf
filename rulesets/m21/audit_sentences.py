"""M21's sentences of the audit log (``RulesetSpec.audit_sentences``, read by ``staff.audit_sentences`` for an M21
game): the ``m21.*`` kinds its services record (RULES.md Part 2: the deal, the days and nights, the Judge's orders,
the hosts' tools), and their audience (``RulesetSpec.event_families``)."""
from __future__ import annotations

from types import MappingProxyType

from django.utils.translation import gettext_lazy as _

from kernel.events import Audience

#: The sentence of each kind M21 records. Blanks name payload keys (``%(resident)s``...) and ``%(actor)s``.
AUDIT_SENTENCES = MappingProxyType({
    "m21.cohost_added": _("%(actor)s added %(user)s as a co-host."),
    "m21.created": _("%(actor)s created the M21 game (days of %(day_hours)s h, nights of %(night_hours)s h)."),
    "m21.day_decided": _("Day %(day)s was decided (%(how)s)."),
    "m21.day_started": _("Day %(day)s started; the deadline is %(deadline)s."),
    "m21.day_tied": _("Day %(day)s ended in a tie: %(tied)s."),
    "m21.extra_published": _("The extra post of day %(day)s was published."),
    "m21.game_won": _("The game is won: %(winner)s."),
    "m21.gun_fired": _("A gun was fired at %(target)s (day %(day)s)."),
    "m21.imprisoned": _("%(resident)s was imprisoned."),
    "m21.item_confiscated": _("An item was confiscated from %(target)s (day %(day)s)."),
    "m21.judge_casting_vote": _("The Judge cast the deciding vote on %(target)s (day %(day)s)."),
    "m21.judge_closed_proceedings": _("The Judge closed the proceedings of day %(day)s."),
    "m21.killed": _("%(resident)s was killed."),
    "m21.night_action": _("A night action was submitted (night %(night)s)."),
    "m21.night_action_withdrawn": _("A night action was withdrawn (night %(night)s)."),
    "m21.night_resolved": _("Night %(night)s was resolved; deaths: %(deaths)s."),
    "m21.night_started": _("Night %(night)s started; it ends at %(ends)s."),
    "m21.phase_extended": _("%(actor)s extended the phase by %(hours)s h, from %(from)s to %(to)s."),
    "m21.player_removed": _("%(actor)s removed %(resident)s from the game (%(cause)s)."),
    "m21.post_mortem": _("A post-mortem result on %(target)s (day %(day)s)."),
    "m21.roles_dealt": _("%(actor)s dealt the roles; day 1 starts at %(first_day_starts_at)s."),
    "m21.setup_chosen": _("%(actor)s chose the setup."),
    "m21.setup_drawn": _("The setup was drawn."),
    "m21.stash_assigned": _("A stash was assigned (night %(night)s)."),
    "m21.timing_set": _("%(actor)s set the timing: days of %(day_hours)s h, nights of %(night_hours)s h."),
    "m21.vote_count_posted": _("The vote count of day %(day)s was posted: %(message)s."),
})

#: Every ``m21.*`` kind is the host's (the game's Procurator) while the game runs: the deal, the day's results,
#: the Judge's orders.
EVENT_FAMILIES = (("m21.", Audience.PROCURATOR),)
