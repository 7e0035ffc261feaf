"""M21's deadline reminders (RULES.md M-SETUP-2, M-VOTE-5, M-NIGHT-1, M-ROLE judge): whom the approaching day's
deadline, night's end and the Judge's casting window concern, for ``archive.notifications`` through
``M21Ruleset.reminder_audience`` (the wording is ``M21Ruleset.reminder_texts``). Each audience reads where the deadline happens (the policy decides, at send time
again). Read-only."""
from __future__ import annotations

from cities.models import LifeStatus, Resident, ScheduledEvent
from inboxes import policies

from .service_common import thread_of


def reminder_audience(event: ScheduledEvent) -> list:
    """The users ``event`` concerns: the living players who read the game thread for the day's deadline and the
    night's end; the living Judge with the casting vote unspent for the casting window. Users, not ids."""
    game = event.game
    living = Resident.objects.filter(game=game, status=LifeStatus.ALIVE, user__isnull=False).select_related("user")
    if event.kind == "m21_casting_window_end":
        living = living.filter(m21_seat__role="judge", m21_seat__state__judge_power_left__gt=0)
    thread = thread_of(game)
    if thread is None:
        return []
    readers = set(policies.readers_of_inbox(thread).values_list("pk", flat=True))
    return [seat.user for seat in living if seat.user_id in readers]
