"""Lepra's sentences of the audit log (``RulesetSpec.audit_sentences``, read by ``staff.audit_sentences`` for a Lepra
game): the event kinds only Lepra's services record (``events.LepraEventKind``: the clock and the daily post, the
draws and the commissar, the day's votings, the Supreme Court and the judges, the night, impeachments and
complaints), and the payload codes they show in words."""
from __future__ import annotations

from types import MappingProxyType

from django.utils.translation import gettext_lazy as _

from rulesets.lepra.events import LepraEventKind as K
from rulesets.lepra.models import CourtProcedure, SpeechKind

#: The sentence of each kind only Lepra records (L-STAFF-6). Blanks name payload keys (``%(resident)s``...) and
#: ``%(actor)s``.
AUDIT_SENTENCES = MappingProxyType({
    K.GAME_FINISHED: _("The game is over; the winner: %(winner)s."),
    K.DEMO_LOADED: _("The demo game was loaded."),
    K.DAILY_POST_DRAFTED: _("The site drafted the daily post of day %(day)s."),
    K.DAILY_POST_EDITED: _("%(actor)s edited the daily post."),
    K.DAILY_POST_TEXT_SET: _("%(actor)s set the text of the daily post of day %(day)s."),
    K.DAILY_POST_APPENDED: _("%(actor)s added to the daily post."),
    K.DAILY_POST_HELD: _("The daily post of day %(day)s is held until %(publish_at)s for the Procurator's edits."),
    K.DAILY_POST_EDIT_WINDOW_SET: _("%(actor)s set the daily post's edit window from %(old_minutes)s to %(minutes)s minutes."),
    K.DRAW_COMMITTED: _("%(actor)s committed the draw."),
    K.DRAW_NUMBERS: _("The draw's numbers were taken."),
    K.COMMISSAR_OFFERED: _("The commissar's post of %(city)s was offered (offer %(number)s)."),
    K.COMMISSAR_ANSWERED: _("The offer of the commissar's post was answered."),
    K.COMMISSAR_TRIBUNE_TOLD: _("The Tribune of %(city)s was told who the commissar is."),
    K.COMMISSAR_CHECKED: _("The commissar made a check (night %(night)s)."),
    K.VOTING_SCHEDULED: _("%(actor)s scheduled the voting of %(city)s from %(opens_at)s to %(closes_at)s."),
    K.VOTING_EXTENDED: _("%(actor)s extended the voting until %(to)s."),
    K.VOTING_RESCHEDULED: _("%(actor)s moved the voting of %(city)s to %(to)s."),
    K.VOTING_WINDOW_MISSED: _("The voting of %(city)s planned for %(opens_at)s did not take place."),
    K.VOTING_OPENED: _("%(actor)s opened the voting."),
    K.VOTING_CLOSED: _("%(actor)s closed the voting; the leader: %(leader)s."),
    K.VOTING_EXECUTION_DECIDED: _("%(actor)s decided the execution in %(city)s: %(resident)s."),
    K.VOTING_SPIRITS: _("The spirits of %(city)s: %(spirits)s."),
    K.VOTING_NOMINATED: _("%(nominator)s nominated %(nominee)s in %(city)s (day %(day)s)."),
    K.VOTING_PROXY_REQUESTED: _("%(resident)s asked for a proxy vote for %(nominee)s."),
    K.VOTING_PROXY_ACCEPTED: _("%(actor)s accepted a proxy vote."),
    K.VOTING_SUICIDE_DECLARED: _("%(resident)s declared suicide."),
    K.VOTING_SUICIDE_CONFIRMED: _("%(actor)s confirmed a suicide."),
    K.VOTING_SUICIDE_REFUSED: _("%(actor)s refused the suicide declaration of %(resident)s."),
    K.VOTING_SPEECH_REQUESTED: _("%(resident)s asked for a speech (%(kind)s) with %(other)s."),
    K.COURT_CASE_OPENED: _("%(actor)s put the result before the Supreme Court: %(candidates)s."),
    K.COURT_SENTENCED: _("The Supreme Court sentenced %(resident)s."),
    K.COURT_VOTED: _("Judge %(judge)s confirmed the sentence of %(choice)s."),
    K.COURT_PROCEDURE_SET: _("%(actor)s set the court's procedure: %(procedure)s (before: %(previous)s)."),
    K.ELECTION_SCHEDULED: _("%(actor)s scheduled the judge election of %(city)s from %(opens_at)s to %(closes_at)s."),
    K.ELECTION_OPENED: _("%(actor)s opened a judge election."),
    K.ELECTION_CLOSED: _("The judge election closed; elected: %(winner)s."),
    K.ELECTION_CANDIDATES_PASSED: _("%(actor)s passed the candidates: %(candidates)s."),
    K.ELECTION_PROPOSED: _("%(proposer)s proposed %(candidate)s as a judge."),
    K.ELECTION_PROXY_RECORDED: _("%(actor)s recorded a proxy ballot of %(voter)s for %(candidate)s."),
    K.JUDGE_RECUSED: _("%(actor)s recorded the resignation of judge %(judge)s."),
    K.REMOVAL_OPENED: _("%(actor)s opened a demand to remove judge %(judge)s."),
    K.REMOVAL_CONFIRMED: _("%(resident)s confirmed a demand to remove a judge."),
    K.REMOVAL_VALID: _("A demand to remove a judge is valid (%(count)s confirmations)."),
    K.REMOVAL_APPLIED: _("Judge %(judge)s was removed."),
    K.NIGHT_DECISION: _("A night decision was made in %(city)s (night %(night)s)."),
    K.NIGHT_GIFT: _("A night gift was given."),
    K.NIGHT_RESOLVED: _("Night %(night)s was resolved; deaths: %(deaths)s."),
    K.GODFATHER_APPOINTED: _("A godfather was appointed in %(city)s."),
    K.GODFATHER_ELECTION_OPENED: _("A godfather election opened in %(city)s."),
    K.GODFATHER_ELECTION_CLOSED: _("A godfather election closed."),
    K.GODFATHER_VOTED: _("A vote in a godfather election was cast."),
    K.CLOCK_STARTED: _("The game's clock started: day %(first_day)s begins at %(starts_at)s."),
    K.CLOCK_DAY_STARTED: _("Day %(day)s started."),
    K.CLOCK_NIGHT_STARTED: _("Night %(day)s started."),
    K.CLOCK_REPLANNED: _("The plan moved: the night now starts at %(night_starts_at)s (%(reason)s)."),
    K.CLOCK_DAY_START_SET: _("%(actor)s set the day start from %(from)s to %(to)s; %(moved)s events moved."),
    K.CLOCK_LONG_DAY: _("%(actor)s set the length of day %(day)s: %(calendar_days)s calendar days; %(moved)s events "
                        "moved."),
    K.CLOCK_DAY_SHORTENED: _("%(actor)s set the shortening of day %(day)s: %(hours)s hours; the next day's fixed "
                             "start: %(next_day_starts_at)s."),
    K.INBOXES_OPENED: _("%(actor)s opened the game's inboxes."),
    K.RESIDENT_LAID_TO_REST: _("%(resident)s was laid to rest."),
    K.COURT_RENEWED: _("The Supreme Court was renewed: %(judges)s."),
    K.STAFF_TRIBUNE_REPLACED: _("%(actor)s replaced the Tribune of %(city)s: %(old_user)s by %(new_user)s."),
    K.IMPEACHMENT_DEMANDED: _("%(resident)s demanded the impeachment of the Tribune of %(city)s."),
    K.IMPEACHMENT_SIGNED: _("%(resident)s signed the impeachment demand in %(city)s."),
    K.IMPEACHMENT_REACHED: _("An impeachment demand reached its signatures."),
    K.IMPEACHMENT_OPENED: _("The impeachment of the Tribune of %(city)s opened in %(inbox)s."),
    K.IMPEACHMENT_RULED: _("%(actor)s ruled on an impeachment."),
    K.NO_CONFIDENCE_FILED: _("A complaint of no confidence was filed in %(inbox)s."),
    K.NO_CONFIDENCE_POSTED: _("A complaint of no confidence was posted in %(inbox)s."),
    K.NO_CONFIDENCE_RULED: _("%(actor)s ruled on a complaint of no confidence."),
    K.NO_CONFIDENCE_MAFIA_AUTHOR: _("A mafia complaint's author was recorded."),
    K.ASSIGN_CONFIRMED: _("%(actor)s confirmed the role assignment."),
})

#: Payload codes shown as their choice's words: the court's procedure before and after a change (L-COURT).
AUDIT_PAYLOAD_CODES = MappingProxyType({"procedure": CourtProcedure, "previous": CourtProcedure})
#: The "kind" of a requested speech (L-NOM) in words.
AUDIT_KIND_CODES = MappingProxyType({K.VOTING_SPEECH_REQUESTED: SpeechKind})
