"""M21's typed scheduled kinds (``kernel.events``), declared on its spec (``M21Ruleset.scheduled_event_kinds``): the
``ScheduledEvent`` kinds of its clock (``handlers``), each with the audience of the ``scheduler.<kind>`` row the
scheduler writes when it runs (the hosts', like every ``m21.*`` row) and its label. The ``GameEvent`` kinds M21
records are typed by family (``audit_sentences.EVENT_FAMILIES``)."""
from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from kernel.events import Audience, DeclaredScheduledKind


class M21ScheduledKind(DeclaredScheduledKind):
    """The ``ScheduledEvent`` kinds M21's services plan and handle (the phases, M-SETUP-2; the day's deadline,
    M-VOTE-4; the Judge's casting vote window, M-ROLE), the hosts' in the audit log (M-SETUP-4)."""

    DAY_START = "m21_day_start", Audience.PROCURATOR, _("the start of a day")
    DAY_DEADLINE = "m21_day_deadline", Audience.PROCURATOR, _("the deadline of a day")
    CASTING_WINDOW_END = "m21_casting_window_end", Audience.PROCURATOR, _("the end of the Judge's casting vote window")
    NIGHT_START = "m21_night_start", Audience.PROCURATOR, _("the start of a night")
    NIGHT_END = "m21_night_end", Audience.PROCURATOR, _("the end of a night and its resolution")
