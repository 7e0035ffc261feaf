"""Lepra day pages : the city day page (nominations, voting times, proxies, the standing tally) and the
resident's nomination page. Thin: a form, the policy, one service or selector call."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from cities.i18n import activate_game_language
from cities.ruleset_pages import check_page_section
from cities.selectors import game_get
from inboxes import access, policies
from kernel.confirm import confirmation_page
from kernel.errors import RuleViolation
from kernel.timezones import zoned_time
from rulesets.lepra.court import judge_services
from rulesets.lepra.court import services as court_services

from . import selectors, services
from .forms import (
    CandidateForm,
    CourtDeadlineForm,
    CourtVoteForm,
    ExecutionDecisionForm,
    NomineeForm,
    ScheduleVotingForm,
    SpeechRequestForm,
)


@require_http_methods(["GET", "HEAD", "POST"])
def city_day(request, slug: str, number: int):
    """Today's execution voting of one city: the Tribune schedules, opens and closes voting and accepts proxies;
    the Tribune, Procurator and Arbiter see the nominations; everyone sees the nominees once voting opens; readers
    of the voting inboxes see the standing tally (L-NOM, L-VOTE, L-DAY-3)."""
    game = game_get(slug)
    activate_game_language(request, game)
    check_page_section(game, "cities")
    city = access.access_city_by_number(request.user, game, number)
    day = selectors.city_day_for(request.user, city)
    form = ScheduleVotingForm(time_zone=game.time_zone)
    court_form = CourtDeadlineForm(time_zone=game.time_zone)
    vote_form = CourtVoteForm(choices=day.court_choices)
    decide_form = ExecutionDecisionForm(choices=day.decision_choices)
    propose_form = _candidate_form(request, city, day)
    status, error, refusal, done = 200, None, None, _("Done.")
    if request.method == "POST":
        action = request.POST.get("action")
        if action not in CITY_DAY_ACTIONS:  # refused before anything runs: nothing changes
            return render(request, "lepra/day/city_day.html", {
                "game": game, "city": city, "day": day, "form": form, "court_form": court_form,
                "error": _("Unknown action: nothing was changed."), "vote_form": vote_form, "decide_form": decide_form,
                "propose_form": propose_form, "is_resident": _is_resident(request, game, city)}, status=400)
        allowed = (day.is_tribune or (action == "decide" and day.is_procurator)
                   or (action in JUDGE_ACTIONS and request.user.is_authenticated)
                   or (action in ("put_before_court", "close_case") and day.is_arbiter)
                   or (action == "court_vote" and day.court_case is not None and request.user.is_authenticated))
        if not allowed:
            raise Http404("No such page.")
        try:
            if action in JUDGE_ACTIONS:
                _judge_action(request, game, city, day, action)
            elif action == "put_before_court" and day.session is not None:
                court_form = CourtDeadlineForm(request.POST, time_zone=game.time_zone)
                if not court_form.is_valid():
                    raise _FormInvalid()
                case = court_services.do_put_before_court(day.session, court_form.cleaned_data["deadline"],
                                                    acting_user=request.user)
                done = _("The result is before the Supreme Court until %(time)s.") % {
                    "time": zoned_time(case.deadline, game.time_zone)}
            elif action == "close_case" and day.court_case is not None:
                court_services.do_close_court_case(day.court_case, acting_user=request.user)
            elif action == "court_vote" and day.court_case is not None:
                if day.judge_seat is None:  # no vote form for them: the service says why (voted, not a judge...)
                    court_services.check_court_vote(day.court_case, acting_user=request.user, now=timezone.now())
                    raise Http404("No such action.")
                vote_form = CourtVoteForm(request.POST, choices=day.court_choices)
                if not vote_form.is_valid():
                    raise _FormInvalid()
                choice = vote_form.chosen()
                confirm = confirmation_page(  # a judge's vote is final (L-COURT-2): the second step says so
                    request, title=_("Confirm the sentence of %(name)s?") % {"name": choice.name}, game=game,
                    consequence=_("A judge's vote cannot be changed: once recorded, it counts towards the Supreme "
                                  "Court's decision on %(city)s.") % {"city": city.name},
                    confirm_label=_("Record my vote"), cancel_url=request.get_full_path())
                if confirm is not None:
                    return confirm
                court_services.do_court_vote(day.court_case, choice, acting_user=request.user)
                done = _("Your vote is recorded: you confirm the sentence of %(name)s. A judge's vote cannot be "
                         "changed.") % {"name": choice.name}
                day.court_case.refresh_from_db()
                if day.court_case.sentenced_id is not None:
                    done += " " + _("The court has decided: %(name)s is sentenced.") % {
                        "name": day.court_case.sentenced.name}
            elif action == "decide":
                decide_form = ExecutionDecisionForm(  # a bad id is the 404 of the page's other id fields
                    request.POST, choices=day.decision_choices,
                    access=lambda resident_id: access.access_resident_by_id(request.user, resident_id, city=city))
                if not decide_form.is_valid():
                    raise _FormInvalid()
                services.do_decide_execution(city, decide_form.chosen(), acting_user=request.user)
            elif action == "schedule":
                form = ScheduleVotingForm(request.POST, time_zone=game.time_zone)
                if not form.is_valid():
                    raise _FormInvalid()
                services.do_schedule_voting(city, form.cleaned_data["opens_at"], form.cleaned_data["closes_at"],
                                            acting_user=request.user)
            elif action == "open" and day.session is not None:
                services.do_open_voting(day.session, acting_user=request.user)
            elif action == "extend" and day.session is not None:
                extend_form = ScheduleVotingForm({"opens_at": "2000-01-01T00:00", "closes_at": request.POST.get("closes_at")},
                                                 time_zone=game.time_zone)
                if not extend_form.is_valid():
                    error = "; ".join(str(e) for errs in extend_form.errors.values() for e in errs)
                    raise _FormInvalid()
                services.do_extend_voting(day.session, extend_form.cleaned_data["closes_at"], acting_user=request.user)
            elif action == "close" and day.session is not None:
                confirm = confirmation_page(
                    request, title=_("Close the voting now?"), game=game,
                    consequence=_("Voting in %(city)s closes at once: no vote is accepted after this moment and the "
                                  "result is posted.") % {"city": city.name},
                    confirm_label=_("Close voting now"), cancel_url=request.get_full_path())
                if confirm is not None:
                    return confirm
                services.do_close_voting(day.session, acting_user=request.user)
            elif action == "confirm_suicide":
                declaration = access.access_suicide_declaration_by_id(request.user, request.POST.get("declaration"),
                                                                     city=city)
                services.do_confirm_suicide(declaration, acting_user=request.user)
            elif action == "accept_proxy":
                proxy = access.access_proxy_request_by_id(request.user, request.POST.get("proxy"), city=city)
                services.do_accept_proxy(proxy, acting_user=request.user)
            else:
                raise Http404("No such action.")
        except _FormInvalid as invalid:
            status = 400
            if invalid.args and action == "propose_candidate":
                propose_form = invalid.args[0]
        except RuleViolation as exc:
            status = 400
            own_form = {"put_before_court": court_form, "court_vote": vote_form, "decide": decide_form}.get(action)
            if own_form is not None and own_form.is_bound:
                own_form.add_error(None, str(exc))  # the refusal inside the form it refuses, when it is shown
                refusal = str(exc)
            else:
                error = str(exc)
        else:
            messages.success(request, done)
            return redirect("city_day", slug=slug, number=number)
        day = selectors.city_day_for(request.user, city)
        if refusal and action not in _shown_forms(day):  # the refused form is not on the page: say it above
            error = refusal
    return render(request, "lepra/day/city_day.html",
                  {"game": game, "city": city, "day": day, "form": form, "error": error, "court_form": court_form,
                   "vote_form": vote_form, "decide_form": decide_form, "propose_form": propose_form,
                   "is_resident": _is_resident(request, game, city)}, status=status)


def _shown_forms(day) -> set[str]:
    """The actions of the city day page whose form ``lepra/day/city_day.html`` shows for ``day`` (the template's
    conditions): a refusal of any other is said above the forms, or it would be lost."""
    shown = set()
    if day.court_case is None and day.is_arbiter and day.session is not None and day.session.closed_at \
            and not day.awaiting_decision:
        shown.add("put_before_court")
    if day.court_case is not None and day.judge_seat is not None:
        shown.add("court_vote")
    if day.decision is None and day.awaiting_decision and day.is_procurator:
        shown.add("decide")
    return shown


def _is_resident(request, game, city) -> bool:
    seat = policies.seat_in(request.user, game)
    return seat is not None and seat.city_id == city.pk


class _FormInvalid(Exception):
    """A posted form of the city day page is invalid: its errors are shown inside it (``args[0]`` the bound form,
    when the page must show that one)."""


#: The city day page's judge actions ; each is one service call that checks who may (L-JUDGE-3/8/9).
JUDGE_ACTIONS = frozenset({"propose_candidate", "open_removal", "confirm_removal", "recuse"})

#: Every action the city day page posts; any other is refused with a reason (400) and changes nothing.
CITY_DAY_ACTIONS = JUDGE_ACTIONS | {"put_before_court", "close_case", "court_vote", "decide", "schedule", "open",
                                    "extend", "close", "confirm_suicide", "accept_proxy"}


def _candidate_form(request, city, day, data=None) -> CandidateForm:
    """The judge candidate form of the city day page over the legal candidates (``day.judges.propose_choices``);
    a posted id is resolved through the access policy first (a bad id is the page's 404)."""
    choices = day.judges.propose_choices if day.judges else []
    return CandidateForm(data, choices=choices, access=lambda resident_id: access.access_resident_by_id(
        request.user, resident_id, city=city))


def _judge_action(request, game, city, day, action: str) -> None:
    """Run one judge action of the city day page as ``request.user``; raises the service's ``RuleViolation``."""
    if action == "propose_candidate":
        form = _candidate_form(request, city, day, request.POST)
        if not form.is_valid():
            raise _FormInvalid(form)
        judge_services.do_propose_candidate(form.chosen(), acting_user=request.user)
    elif action == "open_removal":
        judge_services.do_open_removal_demand(acting_user=request.user, game=game)
    elif action == "confirm_removal":
        demand = access.access_removal_demand_by_id(request.user, request.POST.get("demand"), city=city)
        judge_services.do_confirm_removal_demand(demand, acting_user=request.user)
    elif action == "recuse":
        judge = judge_services.sitting_judge_of(city)
        if judge is None:
            raise Http404("No such action.")
        judge_services.do_recuse_judge(judge, acting_user=request.user)


#: The actions the nomination page posts; any other is refused with a reason and changes nothing.
NOMINATE_ACTIONS = frozenset({"nominate", "proxy", "confrontation", "last_word", "suicide"})


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def nominate(request, slug: str):
    """A resident nominates a candidate for today (L-NOM-1..3) or asks for a proxy vote (L-NOM-6); linked from
    their personal inbox."""
    game = game_get(slug)
    activate_game_language(request, game)
    check_page_section(game, "cities")
    seat = policies.seat_in(request.user, game)
    if seat is None:
        raise Http404("No such page.")
    choices = selectors.nominate_choices(seat)
    form = NomineeForm(choices=choices)
    status, error = 200, None
    others = [r for r in choices if r.pk != seat.pk]
    speech_form = SpeechRequestForm(choices=others)
    action = request.POST.get("action") if request.method == "POST" else None
    if action is not None and action not in NOMINATE_ACTIONS:
        error, status = _("Unknown action: nothing was changed."), 400
    elif action in ("confrontation", "last_word"):
        speech_form = SpeechRequestForm(request.POST, choices=others)
        if speech_form.is_valid():  # no other resident named: the service says what the request needs
            try:
                court_services.do_request_speech(game, request.POST["action"], other=speech_form.other_resident(),
                                           note=speech_form.cleaned_data["note"], acting_user=request.user)
            except RuleViolation as exc:
                speech_form.add_error(None, str(exc))
                status = 400
            else:
                messages.success(request, _("Done."))
                return redirect("nominate", slug=slug)
        else:
            status = 400
    elif action == "suicide":
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
            error, status = str(exc), 400
        else:
            messages.success(request, _("Done."))
            return redirect("nominate", slug=slug)
    elif request.method == "POST":  # "nominate", "proxy", or no action at all (the nomination form's default)
        form = NomineeForm(request.POST, choices=choices)
        if form.is_valid():
            nominee = access.access_resident_by_id(request.user, form.cleaned_data["nominee"], game=game)
            try:
                if action == "proxy":
                    services.do_request_proxy(nominee, acting_user=request.user)
                else:
                    services.do_nominate(nominee, acting_user=request.user)
            except RuleViolation as exc:
                error, status = str(exc), 400
            else:
                messages.success(request, _("Done."))
                return redirect("nominate", slug=slug)
        else:
            status = 400
    mine = selectors.my_day(seat)
    return render(request, "lepra/day/nominate.html", {"game": game, "seat": seat, "form": form, "mine": mine,
                                                    "speech_form": speech_form, "error": error}, status=status)
