"""Helpers of the archive tests: a voting day played out for the vote tables."""
from __future__ import annotations

from datetime import timedelta

from inboxes import posting
from rulesets.lepra.day.services import do_close_voting
from tests.rulesets.lepra.day.day_helpers import CLOSES, OPENS, city1_day, nominate_and_open


def _voting_day(world):
    """City 1 votes on day 2: two nominees; three votes for the first, one for the second, and one voter who
    voted for the first then took it back (changed their mind). Closed at 23:00 Moscow."""
    day = city1_day(world.demo)
    a, b = day.plain[0], day.plain[1]
    session = nominate_and_open(world.demo, day, [a, b])
    voters = [r for r in day.plain if r not in (a, b)][:5]
    minute = timedelta(minutes=1)
    for n, voter in enumerate(voters[:3]):
        posting.do_post_message(day.inbox_of(a), "казнить", acting_user=voter.user, now=OPENS + (n + 1) * minute)
    posting.do_post_message(day.inbox_of(b), "казнить", acting_user=voters[3].user, now=OPENS + 10 * minute)
    posting.do_post_message(day.inbox_of(a), "казнить", acting_user=voters[4].user, now=OPENS + 11 * minute)
    posting.do_post_message(day.inbox_of(a), "не казнить", acting_user=voters[4].user, now=OPENS + 20 * minute)
    do_close_voting(session, acting_user=None, now=CLOSES)
    return day, a, b, voters
