"""Lepra day pages : the city day page (nominations, voting times, proxies, the standing tally, the court, the
judges) and the resident's nomination page. Each button of a page posts its own form to its own URL; each action
view parses that form, makes one service call (the service decides who may) and redirects back to the page, or
shows the page again with the refusal (400 bad input, 403 not allowed, 409 wrong state, ``page_status``)."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from cities.i18n import activate_game_language
from cities.ruleset_pages import check_page_section
from cities.selectors import game_get
from inboxes import access, policies
from kernel.confirm import confirmation_page
from kernel.errors import RuleViolation, WrongState, page_status
from kernel.timezones import zoned_time
from rulesets.lepra import access as lepra_access
from rulesets.lepra.court import judge_services
from rulesets.lepra.court import services as court_services
from rulesets.lepra.models import SpeechKind

from . import selectors, services
from .forms import (
    AcceptProxyForm,
    CandidateForm,
    ConfirmRemovalForm,
    ConfirmSuicideForm,
    CourtDeadlineForm,
    CourtVoteForm,
    ExecutionDecisionForm,
    ExtendVotingForm,
    NominationForm,
    NomineeForm,
    ProxyRequestForm,
    ScheduleVotingForm,
    SpeechRequestForm,
)

# --------------------------------------------------------------------------------------------------------------
# The city day page and its actions
# --------------------------------------------------------------------------------------------------------------

@require_http_methods(["GET", "HEAD"])
def city_day(request, slug: str, number: int):
    """Today's execution voting of one city: the Tribune schedules, opens and closes voting and accepts proxies;
    the Tribune, Procurator and Arbiter see the nominations; everyone sees the nominees once voting opens; readers
    of the voting inboxes see the standing tally (L-NOM, L-VOTE, L-DAY-3). Each button posts to its own action
    URL (the views below)."""
    game, city = _city_of(request, slug, number)
    return _city_day_page(request, game, city)


def _city_of(request, slug: str, number: int):
    """The game and the city of a city day URL (``Http404`` for a missing game or city), in the game's language."""
    game = game_get(slug)
    activate_game_language(request, game)
    check_page_section(game, "cities")
    return game, access.access_city_by_number(request.user, game, number)


def _city_day_page(request, game, city, *, status: int = 200, error: str | None = None, bound=None):
    """The city day page for ``request.user``. ``bound``: (action, bound form) of a refused action, shown in the
    place of its blank form when the page shows that form for the viewer (``_shown_forms``), its errors inside
    it; otherwise the refusal (``error``, or the form's errors) is said above the forms, or it would be lost."""
    day = selectors.city_day_for(request.user, city)
    forms = {
        "schedule": ScheduleVotingForm(time_zone=game.time_zone),
        "extend": ExtendVotingForm(time_zone=game.time_zone, auto_id="id_extend_%s"),
        "put_before_court": CourtDeadlineForm(time_zone=game.time_zone),
        "court_vote": CourtVoteForm(choices=day.court_choices),
        "decide": ExecutionDecisionForm(choices=day.decision_choices),
        "propose_candidate": _candidate_form(request, city, day),
    }
    if bound is not None:
        action, form = bound
        if action in _shown_forms(day):
            forms[action] = form
        elif error is None:
            error = _errors_of(form)
    return render(request, "lepra/day/city_day.html",
                  {"game": game, "city": city, "day": day, "error": error, "form": forms["schedule"],
                   "extend_form": forms["extend"], "court_form": forms["put_before_court"],
                   "vote_form": forms["court_vote"], "decide_form": forms["decide"],
                   "propose_form": forms["propose_candidate"], "is_resident": _is_resident(request, game, city)},
                  status=status)


def _errors_of(form) -> str:
    """The errors of a bound ``form`` in one line."""
    return "; ".join(str(e) for errors in form.errors.values() for e in errors)


def _shown_forms(day) -> set[str]:
    """The actions of the city day page whose form ``lepra/day/city_day.html`` shows for ``day`` (the template's
    conditions): only a shown form can hold its errors."""
    shown = set()
    if day.court_case is None and day.is_arbiter and day.session is not None and day.session.closed_at \
            and not day.awaiting_decision:
        shown.add("put_before_court")
    if day.court_case is not None and day.judge_seat is not None:
        shown.add("court_vote")
    if day.decision is None and day.awaiting_decision and day.is_procurator:
        shown.add("decide")
    if day.is_tribune and (day.session is None or day.session.opened_at is None):
        shown.add("schedule")
    elif day.is_tribune and day.session.closed_at is None:
        shown.add("extend")
    if day.judges is not None and day.judges.election is not None and day.judges.my_proposal is None \
            and day.judges.propose_choices:
        shown.add("propose_candidate")
    return shown


def _is_resident(request, game, city) -> bool:
    seat = policies.seat_in(request.user, game)
    return seat is not None and seat.city_id == city.pk


def _day_action(request, game, city, action: str, form, call):
    """One action of the city day page: ``form`` (None for a button without input) must be valid, then
    ``call(cleaned_data)`` runs the one service and returns what it returned (then the page says "Done."), its
    own success message (a str), or a confirmation page to answer first. Back to the page on success; the page
    again with the reason otherwise (nothing changed)."""
    if form is not None and not form.is_valid():
        return _city_day_page(request, game, city, status=400, bound=(action, form))
    try:
        done = call(form.cleaned_data if form is not None else None)
    except RuleViolation as exc:
        if form is None:
            return _city_day_page(request, game, city, status=page_status(exc), error=str(exc))
        form.add_error(None, str(exc))  # the refusal inside the form it refuses, when the page shows it
        return _city_day_page(request, game, city, status=page_status(exc), bound=(action, form))
    if isinstance(done, HttpResponse):
        return done
    messages.success(request, done if isinstance(done, str) else _("Done."))
    return redirect("city_day", slug=game.slug, number=city.number)


def _todays_session(city):
    """Today's voting session of ``city``; ``WrongState`` when none is scheduled."""
    session = selectors.todays_session(city)
    if session is None:
        raise WrongState(_("Voting is not scheduled yet."))
    return session


def _todays_case(city):
    """The court case of ``city``'s voting today; ``WrongState`` when none is before the court."""
    case = selectors.todays_court_case(city)
    if case is None:
        raise WrongState(_("No result of this city is before the Supreme Court today."))
    return case


@require_POST
@login_required
def schedule_voting(request, slug: str, number: int):
    """The Tribune schedules today's voting (L-DAY-3): ``do_schedule_voting``."""
    game, city = _city_of(request, slug, number)
    form = ScheduleVotingForm(request.POST, time_zone=game.time_zone)
    return _day_action(request, game, city, "schedule", form, lambda data: services.do_schedule_voting(
        city, data["opens_at"], data["closes_at"], acting_user=request.user))


@require_POST
@login_required
def open_voting(request, slug: str, number: int):
    """The Tribune opens today's voting now (L-VOTE-1): ``do_open_voting``."""
    game, city = _city_of(request, slug, number)
    return _day_action(request, game, city, "open", None, lambda _data: services.do_open_voting(
        _todays_session(city), acting_user=request.user))


@require_POST
@login_required
def extend_voting(request, slug: str, number: int):
    """The Tribune moves the end of open voting later (L-DAY-3): ``do_extend_voting``."""
    game, city = _city_of(request, slug, number)
    form = ExtendVotingForm(request.POST, time_zone=game.time_zone, auto_id="id_extend_%s")
    return _day_action(request, game, city, "extend", form, lambda data: services.do_extend_voting(
        _todays_session(city), data["closes_at"], acting_user=request.user))


@require_POST
@login_required
def close_voting(request, slug: str, number: int):
    """The Tribune closes open voting at once (L-VOTE-6), after a confirmation page: ``do_close_voting``."""
    game, city = _city_of(request, slug, number)

    def close(_data):
        session = _todays_session(city)
        confirm = confirmation_page(
            request, title=_("Close the voting now?"), game=game,
            consequence=_("Voting in %(city)s closes at once: no vote is accepted after this moment and the "
                          "result is posted.") % {"city": city.name},
            confirm_label=_("Close voting now"), cancel_url=reverse("city_day", args=[game.slug, city.number]))
        if confirm is not None:
            return confirm
        return services.do_close_voting(session, acting_user=request.user)

    return _day_action(request, game, city, "close", None, close)


@require_POST
@login_required
def confirm_suicide(request, slug: str, number: int):
    """The Tribune confirms a suicide declaration (L-NOM-5): ``do_confirm_suicide``."""
    game, city = _city_of(request, slug, number)
    form = ConfirmSuicideForm(request.POST, access=lambda declaration_id: lepra_access.access_suicide_declaration_by_id(
        request.user, declaration_id, city=city))
    return _day_action(request, game, city, "confirm_suicide", form, lambda data: services.do_confirm_suicide(
        data["declaration"], acting_user=request.user))


@require_POST
@login_required
def accept_proxy(request, slug: str, number: int):
    """The Tribune accepts a proxy vote request (L-NOM-6): ``do_accept_proxy``."""
    game, city = _city_of(request, slug, number)
    form = AcceptProxyForm(request.POST, access=lambda proxy_id: lepra_access.access_proxy_request_by_id(
        request.user, proxy_id, city=city))
    return _day_action(request, game, city, "accept_proxy", form, lambda data: services.do_accept_proxy(
        data["proxy"], acting_user=request.user))


@require_POST
@login_required
def decide_execution(request, slug: str, number: int):
    """The Procurator names the executed when the voting decided nothing (L-VOTE-7): ``do_decide_execution``.
    The choice is among the city's living residents (public); a bad id is the page's 404."""
    game, city = _city_of(request, slug, number)
    form = ExecutionDecisionForm(request.POST, choices=selectors.living_residents_of(city),
                                 access=lambda resident_id: access.access_resident_by_id(request.user, resident_id,
                                                                                         city=city))
    return _day_action(request, game, city, "decide", form, lambda _data: services.do_decide_execution(
        city, form.chosen(), acting_user=request.user))


@require_POST
@login_required
def put_before_court(request, slug: str, number: int):
    """The Arbiter puts today's result before the Supreme Court until a deadline (L-COURT-1, L-COURT-4):
    ``do_put_before_court``."""
    game, city = _city_of(request, slug, number)
    form = CourtDeadlineForm(request.POST, time_zone=game.time_zone)

    def put(data):
        session = selectors.todays_session(city)
        if session is None:
            raise WrongState(_("Voting is not closed yet."))
        case = court_services.do_put_before_court(session, data["deadline"], acting_user=request.user)
        return _("The result is before the Supreme Court until %(time)s.") % {
            "time": zoned_time(case.deadline, game.time_zone)}

    return _day_action(request, game, city, "put_before_court", form, put)


@require_POST
@login_required
def close_court_case(request, slug: str, number: int):
    """The Arbiter closes today's court case now (L-COURT-4): ``do_close_court_case``."""
    game, city = _city_of(request, slug, number)
    return _day_action(request, game, city, "close_case", None, lambda _data: court_services.do_close_court_case(
        _todays_case(city), acting_user=request.user))


@require_POST
@login_required
def court_vote(request, slug: str, number: int):
    """A sitting judge confirms the sentence of one candidate (L-COURT-2), after a confirmation page (a judge's
    vote is final): ``do_court_vote``. Whether the viewer may vote at all is asked first
    (``check_court_vote``), so that the choices before the court are checked only for a judge who may vote."""
    game, city = _city_of(request, slug, number)
    try:
        case = _todays_case(city)
        court_services.check_court_vote(case, acting_user=request.user, now=timezone.now())
    except RuleViolation as exc:
        return _city_day_page(request, game, city, status=page_status(exc), error=str(exc))
    form = CourtVoteForm(request.POST, choices=selectors.court_candidates(case))

    def vote(_data):
        choice = form.chosen()
        confirm = confirmation_page(  # a judge's vote is final (L-COURT-2): the second step says so
            request, title=_("Confirm the sentence of %(name)s?") % {"name": choice.name}, game=game,
            consequence=_("A judge's vote cannot be changed: once recorded, it counts towards the Supreme "
                          "Court's decision on %(city)s.") % {"city": city.name},
            confirm_label=_("Record my vote"), cancel_url=reverse("city_day", args=[game.slug, city.number]))
        if confirm is not None:
            return confirm
        court_services.do_court_vote(case, choice, acting_user=request.user)
        done = _("Your vote is recorded: you confirm the sentence of %(name)s. A judge's vote cannot be "
                 "changed.") % {"name": choice.name}
        case.refresh_from_db()
        if case.sentenced_id is not None:
            done += " " + _("The court has decided: %(name)s is sentenced.") % {"name": case.sentenced.name}
        return done

    return _day_action(request, game, city, "court_vote", form, vote)


def _candidate_form(request, city, day, data=None) -> CandidateForm:
    """The judge candidate form of the city day page over the legal candidates (``day.judges.propose_choices``);
    a posted id is resolved through the access policy first (a bad id is the page's 404)."""
    choices = day.judges.propose_choices if day.judges else []
    return CandidateForm(data, choices=choices, access=lambda resident_id: access.access_resident_by_id(
        request.user, resident_id, city=city))


@require_POST
@login_required
def propose_candidate(request, slug: str, number: int):
    """A resident proposes a judge candidate of their city (L-JUDGE-3), among the candidates the page offers them:
    ``do_propose_candidate``."""
    game, city = _city_of(request, slug, number)
    form = CandidateForm(request.POST, choices=selectors.judges_box(request.user, city).propose_choices,
                         access=lambda resident_id: access.access_resident_by_id(request.user, resident_id,
                                                                                 city=city))
    return _day_action(request, game, city, "propose_candidate", form, lambda _data: (
        judge_services.do_propose_candidate(form.chosen(), acting_user=request.user)))


@require_POST
@login_required
def open_removal_demand(request, slug: str, number: int):
    """A resident demands the removal of their city's judge (L-JUDGE-8): ``do_open_removal_demand``."""
    game, city = _city_of(request, slug, number)
    return _day_action(request, game, city, "open_removal", None, lambda _data: (
        judge_services.do_open_removal_demand(acting_user=request.user, game=game)))


@require_POST
@login_required
def confirm_removal_demand(request, slug: str, number: int):
    """A resident confirms a demand to remove the judge (L-JUDGE-8): ``do_confirm_removal_demand``."""
    game, city = _city_of(request, slug, number)
    form = ConfirmRemovalForm(request.POST, access=lambda demand_id: lepra_access.access_removal_demand_by_id(
        request.user, demand_id, city=city))
    return _day_action(request, game, city, "confirm_removal", form, lambda data: (
        judge_services.do_confirm_removal_demand(data["demand"], acting_user=request.user)))


@require_POST
@login_required
def recuse_judge(request, slug: str, number: int):
    """The city's sitting judge resigns (L-JUDGE-9): ``do_recuse_judge``, which decides who may."""
    game, city = _city_of(request, slug, number)

    def recuse(_data):
        judge = judge_services.sitting_judge_of(city)
        if judge is None:
            raise WrongState(_("The city has no judge."))
        return judge_services.do_recuse_judge(judge, acting_user=request.user)

    return _day_action(request, game, city, "recuse", None, recuse)


# --------------------------------------------------------------------------------------------------------------
# The nomination page and its actions
# --------------------------------------------------------------------------------------------------------------

def _nominate_seat(request, slug: str):
    """The game of a nomination URL and the viewer's seat in it (``Http404`` without one)."""
    game = game_get(slug)
    activate_game_language(request, game)
    check_page_section(game, "cities")
    seat = policies.seat_in(request.user, game)
    if seat is None:
        raise Http404("No such page.")
    return game, seat


def _nominate_page(request, game, seat, *, status: int = 200, error: str | None = None, form=None,
                   speech_form=None):
    """The nomination page of ``seat``; ``form`` / ``speech_form``: a refused bound form shown in place of the
    blank one, with its errors."""
    choices = selectors.nominate_choices(seat)
    others = [r for r in choices if r.pk != seat.pk]
    return render(request, "lepra/day/nominate.html", {
        "game": game, "seat": seat, "mine": selectors.my_day(seat), "error": error,
        "form": form if form is not None else NomineeForm(choices=choices),
        "speech_form": speech_form if speech_form is not None else SpeechRequestForm(choices=others)},
        status=status)


@login_required
@require_http_methods(["GET", "HEAD"])
def nominate(request, slug: str):
    """A resident's page for today (L-NOM): nominate a candidate (L-NOM-1..3), ask for a proxy vote (L-NOM-6), a
    confrontation or a last word (L-NOM-4), declare suicide (L-NOM-5); linked from their personal inbox. Each
    button posts to its own action URL (the views below)."""
    game, seat = _nominate_seat(request, slug)
    return _nominate_page(request, game, seat)


def _nominee_action(request, slug: str, form_class, service):
    """Nominate or ask for a proxy vote: ``form_class`` (a ``NomineeForm``) over the page's choices, then
    ``service(nominee, acting_user=...)``; back to the page, or the page again with the reason."""
    game, seat = _nominate_seat(request, slug)
    form = form_class(request.POST, choices=selectors.nominate_choices(seat))
    if not form.is_valid():
        return _nominate_page(request, game, seat, status=400, form=form)
    nominee = access.access_resident_by_id(request.user, form.cleaned_data["nominee"], game=game)
    try:
        service(nominee, acting_user=request.user)
    except RuleViolation as exc:
        return _nominate_page(request, game, seat, status=page_status(exc), error=str(exc), form=form)
    messages.success(request, _("Done."))
    return redirect("nominate", slug=game.slug)


@require_POST
@login_required
def nominate_resident(request, slug: str):
    """Nominate a resident for today (L-NOM-1..3): ``do_nominate``."""
    return _nominee_action(request, slug, NominationForm, services.do_nominate)


@require_POST
@login_required
def request_proxy(request, slug: str):
    """Ask the Tribune for a proxy vote for a nominee (L-NOM-6): ``do_request_proxy``."""
    return _nominee_action(request, slug, ProxyRequestForm, services.do_request_proxy)


def _speech_action(request, slug: str, kind: str):
    """Ask for a confrontation or a last word (``kind``, L-NOM-4): ``do_request_speech``; the service says what
    each kind of request needs (the other resident of a confrontation)."""
    game, seat = _nominate_seat(request, slug)
    others = [r for r in selectors.nominate_choices(seat) if r.pk != seat.pk]
    form = SpeechRequestForm(request.POST, choices=others)
    if not form.is_valid():
        return _nominate_page(request, game, seat, status=400, speech_form=form)
    try:
        court_services.do_request_speech(game, kind, other=form.other_resident(), note=form.cleaned_data["note"],
                                         acting_user=request.user)
    except RuleViolation as exc:
        form.add_error(None, str(exc))
        return _nominate_page(request, game, seat, status=page_status(exc), speech_form=form)
    messages.success(request, _("Done."))
    return redirect("nominate", slug=game.slug)


@require_POST
@login_required
def request_confrontation(request, slug: str):
    """Ask for a confrontation with another resident (L-NOM-4)."""
    return _speech_action(request, slug, SpeechKind.CONFRONTATION)


@require_POST
@login_required
def request_last_word(request, slug: str):
    """Ask for a last word (L-NOM-4)."""
    return _speech_action(request, slug, SpeechKind.LAST_WORD)


@require_POST
@login_required
def declare_suicide(request, slug: str):
    """Declare suicide (L-NOM-5), after a confirmation page: ``do_declare_suicide``."""
    game, seat = _nominate_seat(request, slug)
    confirm = confirmation_page(
        request, title=_("Declare suicide?"), game=game,
        consequence=_("Unless the Tribune refuses it before voting starts, it is confirmed when voting starts: "
                      "you die then and leave the game; your alignment is announced and you can no longer post "
                      "among the living."),
        confirm_label=_("Declare suicide"), cancel_url=reverse("nominate", args=[slug]))
    if confirm is not None:
        return confirm
    try:
        services.do_declare_suicide(game, acting_user=request.user)
    except RuleViolation as exc:
        return _nominate_page(request, game, seat, status=page_status(exc), error=str(exc))
    messages.success(request, _("Done."))
    return redirect("nominate", slug=game.slug)
