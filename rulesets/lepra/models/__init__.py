"""Lepra's own tables, one module per part of its rules: a seat's ranks (``seats``), the day, the court and the
judges (``day``), the setup draws, the nights and the game's end (``night``), impeachment, the mafia's role acknowledgement and complaints of no confidence (``staff``). Every name is importable from ``rulesets.lepra.models``, Django's home of the app's models.

Lepra's rules on the engine's shared inbox table (one current personal inbox per resident, L-INBOX-5; one current
mafia inbox per city, L-INBOX-4; the per-city kinds have their city) are SQL of its own migration, not constraints of
the engine's model: ``rulesets.lepra.inbox_constraints``."""
from .day import (  # noqa: F401
    CityJudge,
    CourtCase,
    CourtProcedure,
    CourtProcedureChoice,
    CourtVote,
    DecisionSource,
    ElectionBallot,
    ElectionProxy,
    ElectionReason,
    ExecutionDecision,
    JudgeElection,
    JudgeProposal,
    JudgeRecusal,
    LepraVote,
    Nomination,
    Precinct,
    ProxyRequest,
    ProxyState,
    RemovalConfirmation,
    RemovalDemand,
    SpeechKind,
    SpeechRequest,
    SuicideDeclaration,
    VoteState,
    VotingSession,
)
from .night import (  # noqa: F401
    CommissarCheck,
    CommissarOffer,
    GameResult,
    Gift,
    GiftKind,
    GodfatherElection,
    GodfatherVote,
    MafiaDraw,
    NightActionKind,
    NightDecision,
    NightResolution,
)
from .seats import LepraSeat  # noqa: F401
from .staff import (  # noqa: F401
    ImpeachmentDemand,
    ImpeachmentRuling,
    ImpeachmentSignature,
    NoConfidenceCase,
    NoConfidenceRuling,
    NoConfidenceTarget,
    RoleAcknowledgement,
)
