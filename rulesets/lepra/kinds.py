"""Lepra's inbox kinds (the L-INBOX table): the values stored in ``Inbox.kind`` for Lepra's games and their labels,
registered on the spec (``LepraRuleset.inbox_kind_choices``)."""
from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _


class LepraInboxKind(models.TextChoices):
    """The kinds of Lepra's inboxes: the standing ones (city L-INBOX-1, court L-INBOX-2, police station L-INBOX-3,
    personal L-INBOX-5, cemetery L-INBOX-6, office L-INBOX-7, bar L-INBOX-8), the draw's mafia inbox and notary, the
    day's voting inboxes, precincts and removal demands, the check channel, stages, impeachments (L-INBOX-14),
    complaints of no confidence and secret inboxes (L-INBOX-13)."""

    CITY = "city", _("City")
    COURT = "court", _("Supreme Court")
    POLICE = "police", _("Police station")
    MAFIA = "mafia", _("Mafia")
    PERSONAL = "personal", _("Personal")
    CEMETERY = "cemetery", _("Cemetery")
    OFFICE = "office", _("Office")
    BAR = "bar", _("Bar")
    VOTING = "voting", _("Execution voting")
    PRECINCT = "precinct", _("Election precinct")
    REMOVAL = "removal", _("Judge removal demand")
    NOTARY = "notary", _("Notary")
    SECRET = "secret", _("Secret")
    IMPEACHMENT = "impeachment", _("Impeachment")
    CHECK = "check", _("Commissar check channel")
    STAGE = "stage", _("Stage")
    COMPLAINT = "complaint", _("No confidence in the Arbiter")
    MAFIA_COMPLAINT = "mafia_compl", _("No confidence in the Consigliere")
