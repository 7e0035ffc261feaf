"""The Lepra post hooks (``inboxes.hooks``): a voting inbox counts «казнить» / «не казнить» and the nominee's last
word (L-VOTE-2/3/8); an election precinct takes one ballot «Он - Ганди!» / «Он - Гитлер!» (L-JUDGE-4)."""
from __future__ import annotations

from inboxes.hooks import PostHook, post_hook
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra.court.judge_services import check_precinct_post, record_precinct_post
from rulesets.lepra.day.selectors import tally_box_for_inbox
from rulesets.lepra.day.vote_posts import check_voting_post, voting_post_locked_reads, voting_post_writes


@post_hook(LepraInboxKind.VOTING, ruleset="lepra")
class VotingInboxHook(PostHook):
    """L-VOTE-2/3/8: a resident's post is a vote, a retraction or the last word, else refused with the tally's
    reason; the standing-vote index follows the accepted post."""

    thread_box_template = "lepra/day/_tally_box.html"

    def locked_reads(self):
        return voting_post_locked_reads()

    def check(self, inbox, seat, text, now):
        return check_voting_post(inbox, seat, text, now)

    def thread_box(self, viewer, inbox):
        """The standing tally above the thread (L-VOTE-4)."""
        return tally_box_for_inbox(viewer, inbox)

    def writes(self, inbox, seat, message, accepted, now):
        return voting_post_writes(inbox, seat, message, accepted, now)


@post_hook(LepraInboxKind.PRECINCT, ruleset="lepra")
class PrecinctHook(PostHook):
    """L-JUDGE-4: one ballot per voter per precinct, never changed; anything else is refused."""

    thread_box_template = "lepra/day/_tally_box.html"

    def check(self, inbox, seat, text, now):
        return check_precinct_post(inbox, seat, text, now)

    def thread_box(self, viewer, inbox):
        """The precinct's scores above the thread (L-JUDGE-4/5)."""
        return tally_box_for_inbox(viewer, inbox)

    def record(self, inbox, seat, message, accepted, now):
        record_precinct_post(inbox, seat, message, accepted, now)
