"""Lepra's day tables (RULES.md L-NOM, L-VOTE, L-COURT, L-JUDGE): nominations, proxy requests, voting sessions and
standing votes, suicide declarations, execution decisions, the Supreme Court, speech requests, judge elections,
removal demands and recusals.

The tables keep the names they had in the engine's ``voting`` app (``db_table``), and so do their constraints and
indexes. Tables and named constraints only; every write goes through ``rulesets.lepra.day.services`` (DESIGN.md). The record of a
vote is its ``inboxes.Message``; ``LepraVote`` is the standing-vote index that the unique constraint protects
against double submits (DESIGN.md "Messages are the record").
"""
from __future__ import annotations

from django.conf import settings
from django.contrib.contenttypes.fields import GenericRelation
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from cities.models import City, Game, Resident
from inboxes.models import Inbox, Message
from kernel.public_ids import PublicIdField


class Nomination(models.Model):
    """A resident's nomination of a candidate for execution on game day ``day``: one per nominator
    per day."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="nominations", verbose_name=_("game"))
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="nominations", verbose_name=_("city"))
    day = models.PositiveSmallIntegerField(verbose_name=_("day"))
    nominator = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="nominations_made",
        verbose_name=_("nominator"))
    nominee = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="nominations_received",
        verbose_name=_("nominee"))
    at = models.DateTimeField(verbose_name=_("at"))

    class Meta:
        db_table = "voting_nomination"
        verbose_name = _("nomination")
        verbose_name_plural = _("nominations")
        ordering = ["city_id", "day", "at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["nominator", "day"], name="nomination_one_per_nominator_per_day"),
        ]

    def __str__(self) -> str:
        return f"{self.nominator} → {self.nominee} (day {self.day})"


class VotingSession(models.Model):
    """One city's execution voting on one game day.

    ``opens_at``/``closes_at`` (aware UTC) are the voting window (a vote counts when ``opens_at`` ≤ receive time <
    ``closes_at``); ``opened_at``/``closed_at`` when the site
    actually opened the inboxes and computed the result. ``result`` is ``LepraExecutionResult.as_dict()`` with
    residents keyed by their id, stored at the close.
    """

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="voting_sessions", verbose_name=_("game"))
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="voting_sessions", verbose_name=_("city"))
    day = models.PositiveSmallIntegerField(verbose_name=_("day"))
    opens_at = models.DateTimeField(verbose_name=_("opens at"))
    closes_at = models.DateTimeField(verbose_name=_("closes at"))
    opened_at = models.DateTimeField(null=True, blank=True, verbose_name=_("opened at"))
    closed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("closed at"))
    result = models.JSONField(null=True, blank=True, verbose_name=_("result"))
    public_id = PublicIdField()

    class Meta:
        db_table = "voting_votingsession"
        verbose_name = _("voting session")
        verbose_name_plural = _("voting sessions")
        ordering = ["day", "city_id"]
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
    """A proxy vote request: ``resident`` asks the Tribune, before voting starts, to vote «казнить» for
    ``nominee`` on ``day``; once accepted, the site casts it at the opening with the opening timestamp."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="proxy_requests", verbose_name=_("game"))
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="proxy_requests", verbose_name=_("city"))
    day = models.PositiveSmallIntegerField(verbose_name=_("day"))
    resident = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="proxy_requests",
        verbose_name=_("resident"))
    nominee = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="+", verbose_name=_("nominee"))
    state = models.CharField(max_length=10, choices=ProxyState.choices, default=ProxyState.REQUESTED,
        verbose_name=_("state"))
    requested_at = models.DateTimeField(verbose_name=_("requested at"))
    accepted_at = models.DateTimeField(null=True, blank=True, verbose_name=_("accepted at"))
    public_id = PublicIdField()
    #: Its notifications (``archive.Notification.record``): deleting the record deletes them.
    notifications = GenericRelation("archive.Notification", content_type_field="record_type",
                                    object_id_field="record_id")

    class Meta:
        db_table = "voting_proxyrequest"
        verbose_name = _("proxy request")
        verbose_name_plural = _("proxy requests")
        ordering = ["day", "requested_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["resident", "nominee", "day"], name="proxyrequest_one_per_voter_nominee_day"),
        ]


class VoteState(models.TextChoices):
    STANDING = "standing", _("standing")
    RETRACTED = "retracted", _("retracted")


class LepraVote(models.Model):
    """A «казнить» in a voting inbox: standing until retracted by a «не казнить» (``retracted_by``).

    At most one standing vote per (voter, voting inbox), enforced by a named unique constraint: double submits
    and two tabs never produce two votes (DESIGN.md). ``proxy`` marks a vote the site cast.
    """

    inbox = models.ForeignKey(Inbox, on_delete=models.CASCADE, related_name="lepra_votes", verbose_name=_("inbox"))
    voter = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="lepra_votes", verbose_name=_("voter"))
    message = models.OneToOneField(Message, on_delete=models.PROTECT, related_name="lepra_vote",
        verbose_name=_("message"))
    retracted_by = models.OneToOneField(Message, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        verbose_name=_("retracted by"))
    state = models.CharField(max_length=10, choices=VoteState.choices, default=VoteState.STANDING,
        verbose_name=_("state"))
    proxy = models.BooleanField(default=False, verbose_name=_("proxy"))
    cast_at = models.DateTimeField(verbose_name=_("cast at"))
    #: True on the voter's latest retracted vote in the inbox, and on no other row: with the standing vote, the
    #: stored tally reads at most two rows per voter, whatever the number of their votes (``rulesets.lepra.day.standing``).
    latest_retraction = models.BooleanField(default=False, db_default=False, verbose_name=_("latest retraction"))
    #: The receive time of the «не казнить» that retracted the vote (``retracted_by``'s), kept on the row so that
    #: the tally orders retractions without reading the messages.
    retracted_at = models.DateTimeField(null=True, blank=True, verbose_name=_("retracted at"))

    class Meta:
        db_table = "voting_lepravote"
        verbose_name = _("lepra vote")
        verbose_name_plural = _("lepra votes")
        ordering = ["cast_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["inbox", "voter"], condition=Q(state="standing"),
                                    name="lepravote_one_standing_per_voter_inbox"),
        ]
        # Not unique: a retraction moves the flag from one row to another in one UPDATE, and a unique index is
        # checked row by row (the tests check one flag per voter after random sequences).
        # The standing tally reads exactly the rows of this second index's condition (``rulesets.lepra.day.standing``): an
        # index scan of a voting's few hundred counted rows, however many retracted votes lie beside them.
        indexes = [models.Index(fields=["inbox", "voter"], condition=Q(latest_retraction=True),
                                name="lepravote_latest_retraction"),
                   models.Index(fields=["inbox", "voter"], condition=Q(state="standing") | Q(latest_retraction=True),
                                name="lepravote_tally")]


class SuicideDeclaration(models.Model):
    """A suicide declared in the personal inbox before nominations close. The Tribune may confirm or
    refuse it until the planned opening of the city's voting; one not refused by then is confirmed at the opening
    (``confirmed_at``, by the clock if nobody acted) and applied then (``applied_at``): the resident dies at that
    moment and takes no part in voting. None is confirmed later that day."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="suicide_declarations",
        verbose_name=_("game"))
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="suicide_declarations",
        verbose_name=_("city"))
    day = models.PositiveSmallIntegerField(verbose_name=_("day"))
    resident = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="suicide_declarations",
        verbose_name=_("resident"))
    declared_at = models.DateTimeField(verbose_name=_("declared at"))
    confirmed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("confirmed at"))
    applied_at = models.DateTimeField(null=True, blank=True, verbose_name=_("applied at"))
    refused_at = models.DateTimeField(null=True, blank=True, verbose_name=_("refused at"))
    public_id = PublicIdField()

    class Meta:
        db_table = "voting_suicidedeclaration"
        verbose_name = _("suicide declaration")
        verbose_name_plural = _("suicide declarations")
        ordering = ["day", "declared_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["resident", "day"], name="suicide_one_per_resident_per_day"),
            models.CheckConstraint(condition=Q(refused_at__isnull=True) | Q(confirmed_at__isnull=True),
                                   name="suicide_confirmed_or_refused"),
        ]


class DecisionSource(models.TextChoices):
    PROCURATOR = "procurator", _("Procurator")
    COURT = "court", _("Supreme Court")


class ExecutionDecision(models.Model):
    """Who is executed in a city on a day. ``source`` procurator: no nominees or no votes."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="execution_decisions", verbose_name=_("game"))
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="execution_decisions", verbose_name=_("city"))
    day = models.PositiveSmallIntegerField(verbose_name=_("day"))
    resident = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="+", verbose_name=_("resident"))
    source = models.CharField(max_length=12, choices=DecisionSource.choices, verbose_name=_("source"))
    at = models.DateTimeField(verbose_name=_("at"))

    class Meta:
        db_table = "voting_executiondecision"
        verbose_name = _("execution decision")
        verbose_name_plural = _("execution decisions")
        ordering = ["day", "city_id"]
        constraints = [
            models.UniqueConstraint(fields=["city", "day"], name="executiondecision_one_per_city_per_day"),
        ]


class CourtCase(models.Model):
    """A city's voting result before the Supreme Court: ``candidates`` are resident ids (the leader
    alone, or the tied leaders); ``leader`` the leader by votes, then the earlier latest vote (executed when the court
    decides nothing)."""

    session = models.OneToOneField(VotingSession, on_delete=models.PROTECT, related_name="court_case",
        verbose_name=_("session"))
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="court_cases", verbose_name=_("game"))
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="court_cases", verbose_name=_("city"))
    day = models.PositiveSmallIntegerField(verbose_name=_("day"))
    candidates = models.JSONField(default=list, verbose_name=_("candidates"))
    leader = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="+", verbose_name=_("leader"))
    deadline = models.DateTimeField(verbose_name=_("deadline"))
    opened_at = models.DateTimeField(verbose_name=_("opened at"))
    decided_at = models.DateTimeField(null=True, blank=True, verbose_name=_("decided at"))
    sentenced = models.ForeignKey(Resident, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        verbose_name=_("sentenced"))
    fallback = models.BooleanField(default=False, verbose_name=_("fallback"))
    public_id = PublicIdField()

    class Meta:
        db_table = "voting_courtcase"
        verbose_name = _("court case")
        verbose_name_plural = _("court cases")
        ordering = ["day", "city_id"]


class CourtVote(models.Model):
    """A sitting judge's vote in a court case: one per judge, never changed."""

    case = models.ForeignKey(CourtCase, on_delete=models.CASCADE, related_name="votes", verbose_name=_("case"))
    judge = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="court_votes", verbose_name=_("judge"))
    choice = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="+", verbose_name=_("choice"))
    at = models.DateTimeField(verbose_name=_("at"))

    class Meta:
        db_table = "voting_courtvote"
        verbose_name = _("court vote")
        verbose_name_plural = _("court votes")
        ordering = ["at", "id"]
        constraints = [models.UniqueConstraint(fields=["case", "judge"], name="courtvote_one_per_judge_per_case")]


class CourtProcedure(models.TextChoices):
    """How the Supreme Court confirms a sentence; the codes of ``rulesets.lepra.court.decision.PROCEDURES``."""

    VOTES_CAST = "votes_cast", _("at least half of the votes cast")
    SITTING_JUDGES = "sitting_judges", _("at least half of the sitting judges")


class CourtProcedureChoice(models.Model):
    """The procedure the Arbiter chose for a game's court before it sat. No row: the default,
    at least half of the votes cast."""

    game = models.OneToOneField(Game, on_delete=models.CASCADE, related_name="court_procedure",
        verbose_name=_("game"))
    procedure = models.CharField(max_length=16, choices=CourtProcedure.choices, default=CourtProcedure.VOTES_CAST,
        verbose_name=_("procedure"))
    set_at = models.DateTimeField(verbose_name=_("set at"))
    set_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+",
        verbose_name=_("set by"))

    class Meta:
        db_table = "voting_courtprocedurechoice"
        verbose_name = _("court procedure")
        verbose_name_plural = _("court procedures")
        constraints = [models.CheckConstraint(condition=Q(procedure__in=["votes_cast", "sitting_judges"]),
                                              name="courtprocedurechoice_known_procedure")]

    def __str__(self) -> str:
        return f"{self.game}: {self.get_procedure_display()}"


class SpeechKind(models.TextChoices):
    CONFRONTATION = "confrontation", _("confrontation")
    LAST_WORD = "last_word", _("last word")


class SpeechRequest(models.Model):
    """A resident's demand for a confrontation (with ``other``) or a last word: a record the Tribune
    and the Procurator both see; the Procurator may then open a stage inbox."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="speech_requests", verbose_name=_("game"))
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="speech_requests", verbose_name=_("city"))
    day = models.PositiveSmallIntegerField(verbose_name=_("day"))
    resident = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="speech_requests",
        verbose_name=_("resident"))
    kind = models.CharField(max_length=14, choices=SpeechKind.choices, verbose_name=_("kind"))
    other = models.ForeignKey(Resident, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        verbose_name=_("other"))
    note = models.CharField(max_length=300, blank=True, verbose_name=_("note"))
    at = models.DateTimeField(verbose_name=_("at"))
    public_id = PublicIdField()

    class Meta:
        db_table = "voting_speechrequest"
        verbose_name = _("speech request")
        verbose_name_plural = _("speech requests")
        ordering = ["day", "at", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(kind="confrontation", other__isnull=False) | Q(kind="last_word", other__isnull=True),
                                   name="speechrequest_other_iff_confrontation"),
        ]


# ==============================================================================================================
# Judges : elections, removal demands and recusals
# ==============================================================================================================

class ElectionReason(models.TextChoices):
    """Why a city elects a judge."""

    FIRST_DAY = "first_day", _("day 1")
    REMOVAL = "removal", _("removal")
    RECUSAL = "recusal", _("recusal")
    DEATH = "death", _("death of the judge")
    FAILED = "failed", _("failed election")


class JudgeElection(models.Model):
    """One judge election of one city: scheduled by the Arbiter (or by the site after a failed
    election), announced in the city inbox at ``announced_at``, opened at ``opens_at`` (one precinct
    per candidate), closed at ``closes_at`` (aware UTC). ``result`` is
    ``LepraElectionResult.as_dict()`` with residents keyed by id plus ``names``; ``winner`` None after the close
    means the election failed. ``candidates_passed_at``: the Tribune passed the list to the Arbiter; proposals close
    then. ``cancelled_at``: replaced before opening."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="judge_elections", verbose_name=_("game"))
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="judge_elections", verbose_name=_("city"))
    day = models.PositiveSmallIntegerField(verbose_name=_("day"))
    reason = models.CharField(max_length=12, choices=ElectionReason.choices, verbose_name=_("reason"))
    announced_at = models.DateTimeField(verbose_name=_("announced at"))
    opens_at = models.DateTimeField(verbose_name=_("opens at"))
    closes_at = models.DateTimeField(verbose_name=_("closes at"))
    candidates_passed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("candidates passed at"))
    opened_at = models.DateTimeField(null=True, blank=True, verbose_name=_("opened at"))
    closed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("closed at"))
    cancelled_at = models.DateTimeField(null=True, blank=True, verbose_name=_("cancelled at"))
    winner = models.ForeignKey(Resident, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        verbose_name=_("winner"))
    result = models.JSONField(null=True, blank=True, verbose_name=_("result"))
    follows = models.OneToOneField("self", null=True, blank=True, on_delete=models.PROTECT, related_name="followed_by",
        verbose_name=_("follows"))
    public_id = PublicIdField()

    class Meta:
        db_table = "voting_judgeelection"
        verbose_name = _("judge election")
        verbose_name_plural = _("judge elections")
        ordering = ["opens_at", "city_id", "id"]
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
    """A resident's proposal of a judge candidate of their city, made in their personal inbox: at
    most one per proposer per election."""

    election = models.ForeignKey(JudgeElection, on_delete=models.CASCADE, related_name="proposals",
        verbose_name=_("election"))
    proposer = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="judge_proposals_made",
        verbose_name=_("proposer"))
    candidate = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="judge_proposals_received",
        verbose_name=_("candidate"))
    at = models.DateTimeField(verbose_name=_("at"))

    class Meta:
        db_table = "voting_judgeproposal"
        verbose_name = _("judge proposal")
        verbose_name_plural = _("judge proposals")
        ordering = ["at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["election", "proposer"], name="judgeproposal_one_per_proposer"),
        ]


class ElectionProxy(models.Model):
    """A proxy ballot the Arbiter records before the opening, as a proxy vote is: the site posts ``text``
    (a ballot) as ``voter`` in ``candidate``'s precinct at the opening, timed at the opening."""

    election = models.ForeignKey(JudgeElection, on_delete=models.CASCADE, related_name="proxies",
        verbose_name=_("election"))
    voter = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="+", verbose_name=_("voter"))
    candidate = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="+", verbose_name=_("candidate"))
    text = models.CharField(max_length=40, verbose_name=_("text"))
    recorded_at = models.DateTimeField(verbose_name=_("recorded at"))
    cast_at = models.DateTimeField(null=True, blank=True, verbose_name=_("cast at"))

    class Meta:
        db_table = "voting_electionproxy"
        verbose_name = _("election proxy")
        verbose_name_plural = _("election proxies")
        ordering = ["recorded_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["election", "voter", "candidate"], name="electionproxy_one_per_voter_candidate"),
        ]


class ElectionBallot(models.Model):
    """An accepted ballot in a precinct: **Он - Ганди!** (+1) or **Он - Гитлер!** (−1). One per voter
    per precinct, never changed (named unique constraint: double submits and two tabs never make two ballots).
    The record is the ``Message``; this row is its index."""

    inbox = models.ForeignKey(Inbox, on_delete=models.CASCADE, related_name="election_ballots", verbose_name=_("inbox"))
    voter = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="election_ballots",
        verbose_name=_("voter"))
    message = models.OneToOneField(Message, on_delete=models.PROTECT, related_name="election_ballot",
        verbose_name=_("message"))
    pro = models.BooleanField(verbose_name=_("pro"))
    proxy = models.BooleanField(default=False, verbose_name=_("proxy"))
    cast_at = models.DateTimeField(verbose_name=_("cast at"))

    class Meta:
        db_table = "voting_electionballot"
        verbose_name = _("election ballot")
        verbose_name_plural = _("election ballots")
        ordering = ["cast_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["inbox", "voter"], name="electionballot_one_per_voter_precinct"),
        ]


class RemovalDemand(models.Model):
    """A demand to remove ``judge``, opened by ``organizer`` (a living resident of the
    judge's city) on game day ``day`` with its inbox. ``deadline`` is 4 h before that day's execution voting start
    of the city (None while no voting is scheduled); ``considered`` False when the demand itself came later.
    ``valid_at``: the 5th considered confirmation (organizer included); the Arbiter reads the inbox from then on.
    ``removed_at``: the Arbiter announced the removal (the judge is no longer a judge)."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="removal_demands", verbose_name=_("game"))
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="removal_demands", verbose_name=_("city"))
    day = models.PositiveSmallIntegerField(verbose_name=_("day"))
    judge = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="removal_demands_against",
        verbose_name=_("judge"))
    organizer = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="removal_demands_opened",
        verbose_name=_("organizer"))
    inbox = models.OneToOneField(Inbox, on_delete=models.PROTECT, related_name="removal_demand",
        verbose_name=_("inbox"))
    opened_at = models.DateTimeField(verbose_name=_("opened at"))
    deadline = models.DateTimeField(null=True, blank=True, verbose_name=_("deadline"))
    considered = models.BooleanField(default=True, verbose_name=_("considered"))
    valid_at = models.DateTimeField(null=True, blank=True, verbose_name=_("valid at"))
    removed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("removed at"))
    public_id = PublicIdField()

    class Meta:
        db_table = "voting_removaldemand"
        verbose_name = _("removal demand")
        verbose_name_plural = _("removal demands")
        ordering = ["day", "opened_at", "id"]

    def __str__(self) -> str:
        return f"removal of {self.judge} (day {self.day})"


class RemovalConfirmation(models.Model):
    """A resident's confirmation of a removal demand; ``considered`` False when received after the
    demand's deadline (recorded, not counted). The organizer's opening is their confirmation."""

    demand = models.ForeignKey(RemovalDemand, on_delete=models.CASCADE, related_name="confirmations",
        verbose_name=_("demand"))
    resident = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="removal_confirmations",
        verbose_name=_("resident"))
    at = models.DateTimeField(verbose_name=_("at"))
    considered = models.BooleanField(default=True, verbose_name=_("considered"))

    class Meta:
        db_table = "voting_removalconfirmation"
        verbose_name = _("removal confirmation")
        verbose_name_plural = _("removal confirmations")
        ordering = ["at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["demand", "resident"], name="removalconfirmation_one_per_resident"),
        ]


class JudgeRecusal(models.Model):
    """A judge's resignation to the Arbiter, received at ``at`` on game day ``day``."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="judge_recusals", verbose_name=_("game"))
    city = models.ForeignKey(City, on_delete=models.CASCADE, related_name="judge_recusals", verbose_name=_("city"))
    day = models.PositiveSmallIntegerField(verbose_name=_("day"))
    judge = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="recusals", verbose_name=_("judge"))
    at = models.DateTimeField(verbose_name=_("at"))

    class Meta:
        db_table = "voting_judgerecusal"
        verbose_name = _("judge recusal")
        verbose_name_plural = _("judge recusals")
        ordering = ["at", "id"]


class Precinct(models.Model):
    """The precinct inbox of one candidate in one election."""

    election = models.ForeignKey(JudgeElection, on_delete=models.CASCADE, related_name="precincts",
        verbose_name=_("election"))
    inbox = models.OneToOneField(Inbox, on_delete=models.PROTECT, related_name="precinct", verbose_name=_("inbox"))
    candidate = models.ForeignKey(Resident, on_delete=models.PROTECT, related_name="+", verbose_name=_("candidate"))

    class Meta:
        db_table = "voting_precinct"
        verbose_name = _("precinct")
        verbose_name_plural = _("precincts")
        ordering = ["election_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["election", "candidate"], name="precinct_one_per_candidate"),
        ]


class CityJudge(City):
    """A city seen from its bench (proxy, no table): the staff console's list of cities with their judge, where the
    Arbiter schedules elections and records recusals."""

    class Meta:
        proxy = True
        verbose_name = _("city judge")
        verbose_name_plural = _("city judges")
