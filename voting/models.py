"""Lepra day tables (issue 4): nominations, proxy requests, voting sessions and standing votes.

Tables and named constraints only; every write goes through ``voting.services`` (DESIGN.md). The record of a
vote is its ``inboxes.Message``; ``LepraVote`` is the standing-vote index that the unique constraint protects
against double submits (DESIGN.md "Messages are the record").
"""
from __future__ import annotations

from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from cities.models import City, Game, Resident
from inboxes.models import Inbox, Message


class Nomination(models.Model):
    """A resident's nomination of a candidate for execution on game day ``day`` (L-NOM-1..3): one per nominator
    per day."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="nominations")
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="nominations")
    day = models.PositiveSmallIntegerField()
    nominator = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="nominations_made")
    nominee = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="nominations_received")
    at = models.DateTimeField()

    class Meta:
        ordering = ["city__number", "day", "at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["nominator", "day"], name="nomination_one_per_nominator_per_day"),
        ]

    def __str__(self) -> str:
        return f"{self.nominator} → {self.nominee} (day {self.day})"


class VotingSession(models.Model):
    """One city's execution voting on one game day (L-VOTE, L-DAY-3).

    ``opens_at``/``closes_at`` (aware UTC) are the window of L-VOTE-8; ``opened_at``/``closed_at`` when the site
    actually opened the inboxes and computed the result. ``result`` is ``LepraExecutionResult.as_dict()`` with
    residents keyed by their id, stored at the close.
    """

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="voting_sessions")
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="voting_sessions")
    day = models.PositiveSmallIntegerField()
    opens_at = models.DateTimeField()
    closes_at = models.DateTimeField()
    opened_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["day", "city__number"]
        constraints = [
            models.UniqueConstraint(fields=["city", "day"], name="votingsession_one_per_city_per_day"),
            models.CheckConstraint(condition=Q(opens_at__lt=F("closes_at")), name="votingsession_opens_before_closes"),
        ]

    def __str__(self) -> str:
        return f"{self.city} day {self.day}"

    @property
    def is_open(self) -> bool:
        return self.opened_at is not None and self.closed_at is None


class ProxyState(models.TextChoices):
    REQUESTED = "requested", _("requested")
    ACCEPTED = "accepted", _("accepted")
    CAST = "cast", _("cast")


class ProxyRequest(models.Model):
    """A proxy vote request (L-NOM-6): ``resident`` asks the Tribune, before voting starts, to vote «казнить» for
    ``nominee`` on ``day``; once accepted, the site casts it at the opening with the opening timestamp."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="proxy_requests")
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="proxy_requests")
    day = models.PositiveSmallIntegerField()
    resident = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="proxy_requests")
    nominee = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="+")
    state = models.CharField(max_length=10, choices=ProxyState.choices, default=ProxyState.REQUESTED)
    requested_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["day", "requested_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["resident", "nominee", "day"], name="proxyrequest_one_per_voter_nominee_day"),
        ]


class VoteState(models.TextChoices):
    STANDING = "standing", _("standing")
    RETRACTED = "retracted", _("retracted")


class LepraVote(models.Model):
    """A «казнить» in a voting inbox (L-VOTE-2): standing until retracted by a «не казнить» (``retracted_by``).

    At most one standing vote per (voter, voting inbox), enforced by a named unique constraint: double submits
    and two tabs never produce two votes (DESIGN.md). ``proxy`` marks a vote the site cast (L-NOM-6).
    """

    inbox = models.ForeignKey(Inbox, on_delete=models.CASCADE, related_name="lepra_votes")
    voter = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="lepra_votes")
    message = models.OneToOneField(Message, on_delete=models.PROTECT, related_name="lepra_vote")
    retracted_by = models.OneToOneField(Message, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    state = models.CharField(max_length=10, choices=VoteState.choices, default=VoteState.STANDING)
    proxy = models.BooleanField(default=False)
    cast_at = models.DateTimeField()

    class Meta:
        ordering = ["cast_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["inbox", "voter"], condition=Q(state="standing"),
                                    name="lepravote_one_standing_per_voter_inbox"),
        ]


class SuicideDeclaration(models.Model):
    """A suicide declared in the personal inbox before nominations close (L-NOM-5), confirmed by the Tribune and
    applied when voting starts: the resident dies at that moment and takes no part in voting."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="suicide_declarations")
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="suicide_declarations")
    day = models.PositiveSmallIntegerField()
    resident = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="suicide_declarations")
    declared_at = models.DateTimeField()
    confirmed_at = models.DateTimeField(null=True, blank=True)
    applied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["day", "declared_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["resident", "day"], name="suicide_one_per_resident_per_day"),
        ]


class DecisionSource(models.TextChoices):
    PROCURATOR = "procurator", _("Procurator")
    COURT = "court", _("Supreme Court")


class ExecutionDecision(models.Model):
    """Who is executed in a city on a day. ``source`` procurator: no nominees or no votes (L-VOTE-7)."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="execution_decisions")
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="execution_decisions")
    day = models.PositiveSmallIntegerField()
    resident = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="+")
    source = models.CharField(max_length=12, choices=DecisionSource.choices)
    at = models.DateTimeField()

    class Meta:
        ordering = ["day", "city__number"]
        constraints = [
            models.UniqueConstraint(fields=["city", "day"], name="executiondecision_one_per_city_per_day"),
        ]


class CourtCase(models.Model):
    """A city's voting result before the Supreme Court (L-COURT-1): ``candidates`` are resident ids (the leader
    alone, or the tied leaders, L-COURT-2); ``leader`` the L-VOTE-5 leader (the fallback of L-COURT-4)."""

    session = models.OneToOneField(VotingSession, on_delete=models.PROTECT, related_name="court_case")
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="court_cases")
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="court_cases")
    day = models.PositiveSmallIntegerField()
    candidates = models.JSONField(default=list)
    leader = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="+")
    deadline = models.DateTimeField()
    opened_at = models.DateTimeField()
    decided_at = models.DateTimeField(null=True, blank=True)
    sentenced = models.ForeignKey(Resident, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    fallback = models.BooleanField(default=False)

    class Meta:
        ordering = ["day", "city__number"]


class CourtVote(models.Model):
    """A sitting judge's vote in a court case (L-COURT-2/3): one per judge, never changed (L-INBOX-21)."""

    case = models.ForeignKey(CourtCase, on_delete=models.CASCADE, related_name="votes")
    judge = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="court_votes")
    choice = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField()

    class Meta:
        ordering = ["at", "id"]
        constraints = [models.UniqueConstraint(fields=["case", "judge"], name="courtvote_one_per_judge_per_case")]


class SpeechKind(models.TextChoices):
    CONFRONTATION = "confrontation", _("confrontation")
    LAST_WORD = "last_word", _("last word")


class SpeechRequest(models.Model):
    """A resident's demand for a confrontation (with ``other``) or a last word (L-NOM-4): a record the Tribune
    and the Procurator both see; the Procurator may then open a stage inbox (L-INBOX-19)."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="speech_requests")
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="speech_requests")
    day = models.PositiveSmallIntegerField()
    resident = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="speech_requests")
    kind = models.CharField(max_length=14, choices=SpeechKind.choices)
    other = models.ForeignKey(Resident, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    note = models.CharField(max_length=300, blank=True)
    at = models.DateTimeField()

    class Meta:
        ordering = ["day", "at", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(kind="confrontation", other__isnull=False) | Q(kind="last_word", other__isnull=True),
                                   name="speechrequest_other_iff_confrontation"),
        ]


# ==============================================================================================================
# Judges (issue 5): elections (L-JUDGE-3..6, L-DAY-4/5), removal demands (L-JUDGE-8) and recusals (L-JUDGE-9)
# ==============================================================================================================

class ElectionReason(models.TextChoices):
    """Why a city elects a judge (L-JUDGE-2)."""

    FIRST_DAY = "first_day", _("day 1")
    REMOVAL = "removal", _("removal")
    RECUSAL = "recusal", _("recusal")
    DEATH = "death", _("death of the judge")
    FAILED = "failed", _("failed election")


class JudgeElection(models.Model):
    """One judge election of one city (L-JUDGE-2..6): scheduled by the Arbiter (or by the site after a failed
    election), announced in the city inbox at ``announced_at`` (L-DAY-4), opened at ``opens_at`` (one precinct
    per candidate, L-INBOX-10), closed at ``closes_at`` (aware UTC). ``result`` is
    ``LepraElectionResult.as_dict()`` with residents keyed by id plus ``names``; ``winner`` None after the close
    means the election failed (L-JUDGE-5). ``candidates_passed_at``: the Tribune passed the list to the Arbiter
    (L-JUDGE-3); proposals close then. ``cancelled_at``: replaced before opening."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="judge_elections")
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="judge_elections")
    day = models.PositiveSmallIntegerField()
    reason = models.CharField(max_length=12, choices=ElectionReason.choices)
    announced_at = models.DateTimeField()
    opens_at = models.DateTimeField()
    closes_at = models.DateTimeField()
    candidates_passed_at = models.DateTimeField(null=True, blank=True)
    opened_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    winner = models.ForeignKey(Resident, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    result = models.JSONField(null=True, blank=True)
    follows = models.OneToOneField("self", null=True, blank=True, on_delete=models.PROTECT, related_name="followed_by")

    class Meta:
        ordering = ["opens_at", "city__number", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(opens_at__lt=F("closes_at")), name="judgeelection_opens_before_closes"),
            models.UniqueConstraint(fields=["city"], condition=Q(closed_at__isnull=True, cancelled_at__isnull=True),
                                    name="judgeelection_one_pending_per_city"),
        ]

    def __str__(self) -> str:
        return f"{self.city} election day {self.day}"

    @property
    def is_open(self) -> bool:
        return self.opened_at is not None and self.closed_at is None

    @property
    def is_pending(self) -> bool:
        """Scheduled and not yet closed or cancelled."""
        return self.closed_at is None and self.cancelled_at is None


class JudgeProposal(models.Model):
    """A resident's proposal of a judge candidate of their city (L-JUDGE-3), made in their personal inbox: at
    most one per proposer per election."""

    election = models.ForeignKey(JudgeElection, on_delete=models.CASCADE, related_name="proposals")
    proposer = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="judge_proposals_made")
    candidate = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="judge_proposals_received")
    at = models.DateTimeField()

    class Meta:
        ordering = ["at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["election", "proposer"], name="judgeproposal_one_per_proposer"),
        ]


class ElectionProxy(models.Model):
    """A proxy ballot the Arbiter records before the opening (L-JUDGE-6, as L-NOM-6): the site posts ``text``
    (a ballot) as ``voter`` in ``candidate``'s precinct at the opening, timed at the opening."""

    election = models.ForeignKey(JudgeElection, on_delete=models.CASCADE, related_name="proxies")
    voter = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="+")
    candidate = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="+")
    text = models.CharField(max_length=40)
    recorded_at = models.DateTimeField()
    cast_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["recorded_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["election", "voter", "candidate"], name="electionproxy_one_per_voter_candidate"),
        ]


class ElectionBallot(models.Model):
    """An accepted ballot in a precinct (L-JUDGE-4): **Он - Ганди!** (+1) or **Он - Гитлер!** (−1). One per voter
    per precinct, never changed (named unique constraint: double submits and two tabs never make two ballots).
    The record is the ``Message``; this row is its index."""

    inbox = models.ForeignKey(Inbox, on_delete=models.CASCADE, related_name="election_ballots")
    voter = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="election_ballots")
    message = models.OneToOneField(Message, on_delete=models.PROTECT, related_name="election_ballot")
    pro = models.BooleanField()
    proxy = models.BooleanField(default=False)
    cast_at = models.DateTimeField()

    class Meta:
        ordering = ["cast_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["inbox", "voter"], name="electionballot_one_per_voter_precinct"),
        ]


class RemovalDemand(models.Model):
    """A demand to remove ``judge`` (L-JUDGE-8, L-INBOX-11), opened by ``organizer`` (a living resident of the
    judge's city) on game day ``day`` with its inbox. ``deadline`` is 4 h before that day's execution voting start
    of the city (None while no voting is scheduled); ``considered`` False when the demand itself came later.
    ``valid_at``: the 5th considered confirmation (organizer included); the Arbiter reads the inbox from then on.
    ``removed_at``: the Arbiter announced the removal (the judge is no longer a judge)."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="removal_demands")
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="removal_demands")
    day = models.PositiveSmallIntegerField()
    judge = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="removal_demands_against")
    organizer = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="removal_demands_opened")
    inbox = models.OneToOneField(Inbox, on_delete=models.PROTECT, related_name="removal_demand")
    opened_at = models.DateTimeField()
    deadline = models.DateTimeField(null=True, blank=True)
    considered = models.BooleanField(default=True)
    valid_at = models.DateTimeField(null=True, blank=True)
    removed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["day", "opened_at", "id"]

    def __str__(self) -> str:
        return f"removal of {self.judge} (day {self.day})"


class RemovalConfirmation(models.Model):
    """A resident's confirmation of a removal demand (L-JUDGE-8); ``considered`` False when received after the
    demand's deadline (recorded, not counted). The organizer's opening is their confirmation."""

    demand = models.ForeignKey(RemovalDemand, on_delete=models.CASCADE, related_name="confirmations")
    resident = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="removal_confirmations")
    at = models.DateTimeField()
    considered = models.BooleanField(default=True)

    class Meta:
        ordering = ["at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["demand", "resident"], name="removalconfirmation_one_per_resident"),
        ]


class JudgeRecusal(models.Model):
    """A judge's resignation to the Arbiter (L-JUDGE-9), received at ``at`` on game day ``day``."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="judge_recusals")
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="judge_recusals")
    day = models.PositiveSmallIntegerField()
    judge = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="recusals")
    at = models.DateTimeField()

    class Meta:
        ordering = ["at", "id"]


class Precinct(models.Model):
    """The precinct inbox of one candidate in one election (L-JUDGE-4, L-INBOX-10)."""

    election = models.ForeignKey(JudgeElection, on_delete=models.CASCADE, related_name="precincts")
    inbox = models.OneToOneField(Inbox, on_delete=models.PROTECT, related_name="precinct")
    candidate = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="+")

    class Meta:
        ordering = ["election", "id"]
        constraints = [
            models.UniqueConstraint(fields=["election", "candidate"], name="precinct_one_per_candidate"),
        ]


class CityJudge(City):
    """A city seen from its bench (proxy, no table): the staff console's list of cities with their judge, where the
    Arbiter schedules elections and records recusals (L-JUDGE-2, L-JUDGE-9)."""

    class Meta:
        proxy = True
        verbose_name = _("city judge")
        verbose_name_plural = _("city judges")
