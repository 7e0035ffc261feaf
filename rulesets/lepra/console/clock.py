"""The Procurator's clock pages on the staff admin (``/staff/``).

- ``/staff/games/<slug>/clock/``: starting the clock (``do_start_game_clock``), the phase plan (days, their start, end and night end, long and shortened days),
  the forms that change it (``do_set_day_start``, ``do_declare_long_day``, ``do_shorten_day``: the services
  validate L-DAY-1..3 and reschedule), the pending events, and the **failing events** with their attempts, retry
  time and last error (DESIGN.md "The clock": a failing handler is retried, logged and shown to the Procurator).
- ``/staff/games/<slug>/daily-post/<day>/``: the daily post of a day (L-POST-2): the free text before the site drafts
  it, the draft to edit before publication ("publish now" once the day has started), the published post to append
  to.
- ``/staff/votings/<public id>/reschedule/``: a missed voting window (``rulesets.lepra.day.window_services``), for the city's Tribune, the
  Arbiter or the Procurator: one form, prefilled with a window that fits the day (L-DAY-3).

The clock page also shows when the site's clock is paused (``manage.py clock pause``), attempts that started and
never finished (a crashed worker), failing and waiting events with a "retry now" button, and missed voting windows.

Only the game's Procurator reaches them; anyone else gets the 404 of a missing page, as does an unknown slug or
public id (no database id is in these URLs: it would count every game's objects).
Nothing secret is shown: the plan and post texts are public or the Procurator's own; a failure of the night's
resolution (``night_end``, whose error text could name a mafioso or a target) is shown by its error class only.
"""
from __future__ import annotations

from zoneinfo import ZoneInfo

from django import forms
from django.contrib import messages
from django.http import Http404, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from cities import scheduler
from cities.forms import WallClockField, wall_clock_to_utc
from cities.models import Game, GameDay, ScheduledEvent
from kernel.errors import RuleViolation, page_status
from kernel.form_fields import IdField
from rulesets.lepra.clock import services as clock_services
from rulesets.lepra.console.clock_needs import clock_needs, clock_problems
from rulesets.lepra.day.window_services import (
    can_reschedule,
    do_reschedule_missed_voting,
    is_missed,
    suggested_window,
)
from rulesets.lepra.staff_kinds import StaffKind
from staff.console import (
    register_dashboard_links,
    register_dashboard_needs,
    register_urls,
    staff_admin_site,
    staff_game,
)
from rulesets.lepra.models import JudgeElection, VotingSession


def _register_dashboard_needs() -> None:


    register_dashboard_needs(clock_needs, tool="clock")


_register_dashboard_needs()

#: Event kinds whose error text may carry secrets of the night (L-STAFF-6): shown by error class only.
SECRET_ERROR_KINDS = frozenset({"night_end"})



def shown_error(event: ScheduledEvent) -> str:
    """The last error of ``event`` as the Procurator sees it: the error class only for ``SECRET_ERROR_KINDS``."""
    if event.kind in SECRET_ERROR_KINDS:
        return event.last_error.split(":", 1)[0]
    return event.last_error


def failing_events(game: Game) -> list[ScheduledEvent]:
    """The pending events of ``game`` that have failed at least once (oldest first): they block the later events
    of the game until they succeed (per-game order)."""
    return list(ScheduledEvent.objects.filter(game=game, done_at__isnull=True, cancelled_at__isnull=True,
                                              attempts__gt=0).order_by("due_at", "id"))


def pending_events(game: Game, *, kinds: tuple[str, ...] | None = None, city=None) -> list[ScheduledEvent]:
    """The pending (not done, not cancelled) scheduled events of ``game``, soonest first, each with ``local_due``
    (its ``due_at`` in the game's time zone) for the schedule pages . ``kinds`` narrows to those
    event kinds; ``city`` to the events whose payload names that city (or a session/election of it)."""
    zone = ZoneInfo(game.time_zone)
    events = ScheduledEvent.objects.filter(game=game, done_at__isnull=True, cancelled_at__isnull=True)
    if kinds is not None:
        events = events.filter(kind__in=kinds)
    events = list(events.order_by("due_at", "id"))
    if city is not None:

        sessions = set(VotingSession.objects.filter(city=city).values_list("pk", flat=True))
        elections = set(JudgeElection.objects.filter(city=city).values_list("pk", flat=True))
        events = [e for e in events if (e.payload or {}).get("city") == city.pk
                  or (e.payload or {}).get("session") in sessions or (e.payload or {}).get("election") in elections]
    for event in events:
        event.local_due = timezone.localtime(event.due_at, zone)
    return events


class StartClockForm(forms.Form):
    first_day_starts_at = WallClockField(label=gettext_lazy("The next day starts at (game time)"))

    def __init__(self, *args, time_zone: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.zone = ZoneInfo(time_zone)

    def clean_first_day_starts_at(self):
        """The wall-clock time entered, read in the game's zone (aware UTC)."""
        return wall_clock_to_utc(self.cleaned_data["first_day_starts_at"], self.zone)


class RetryForm(forms.Form):
    event = forms.IntegerField(min_value=1, max_value=2**63 - 1, widget=forms.HiddenInput)


class EditWindowForm(forms.Form):
    minutes = forms.IntegerField(label=gettext_lazy("Daily post edit window (minutes)"), min_value=0,
                                 max_value=clock_services.MAX_EDIT_WINDOW_MINUTES)


class DayStartForm(forms.Form):
    day_start = forms.TimeField(label=gettext_lazy("Day start (game time)"))


class LongDayForm(forms.Form):
    day = IdField(label=gettext_lazy("Day"), min_value=1, max_value=1000)
    calendar_days = IdField(label=gettext_lazy("Calendar days"), min_value=1, max_value=3)


class ShortenDayForm(forms.Form):
    day = IdField(label=gettext_lazy("Day"), min_value=1, max_value=1000)
    hours = IdField(label=gettext_lazy("Hours (empty: an ordinary day)"), required=False, min_value=1,
                    max_value=1000)
    next_day_starts_at = WallClockField(label=gettext_lazy("Next day starts at (game time, optional)"),
                                        required=False)

    def __init__(self, *args, time_zone: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.zone = ZoneInfo(time_zone)

    def clean_next_day_starts_at(self):
        """The wall-clock time entered, read in the game's zone (aware UTC), or None."""
        value = self.cleaned_data.get("next_day_starts_at")
        return None if value is None else wall_clock_to_utc(value, self.zone)


def game_clock_view(request, slug: str):
    """The Procurator's clock page (see the module docstring); each of its buttons posts to its own URL (the
    views below), so the page itself takes no POST (405)."""
    game = staff_game(request, slug)
    if request.method not in ("GET", "HEAD"):
        return HttpResponseNotAllowed(["GET", "HEAD"])
    return _clock_page(request, game)


def _clock_forms(game: Game) -> dict:
    """The clock page's forms, blank, by their action."""
    return {"day_start": DayStartForm(initial={"day_start": game.day_start}), "long_day": LongDayForm(),
            "shorten": ShortenDayForm(time_zone=game.time_zone), "start": StartClockForm(time_zone=game.time_zone),
            "edit_window": EditWindowForm(initial={"minutes": game.daily_post_edit_minutes})}


def _clock_page(request, game: Game, *, status: int = 200, bound: dict | None = None):
    """The clock page; ``bound`` ({action: bound form}): a refused form shown with its errors."""
    forms_ = _clock_forms(game) | (bound or {})
    zone = ZoneInfo(game.time_zone)
    days = list(GameDay.objects.filter(game=game).select_related("post").order_by("number"))
    for day in days:
        day.local = {name: timezone.localtime(getattr(day, name), zone)
                     for name in ("starts_at", "ends_at", "night_ends_at")}
    events = list(ScheduledEvent.objects.filter(game=game, done_at__isnull=True, cancelled_at__isnull=True)
                  .order_by("due_at", "id"))
    for event in events:
        event.local_due = timezone.localtime(event.due_at, zone)
        event.shown_error = shown_error(event)
    context = {**staff_admin_site.each_context(request), "title": _("Game clock"), "subtitle": game.title,
               "game": game, "days": days, "events": events, "failing": [e for e in events if e.attempts],
               "day_start_form": forms_["day_start"], "long_form": forms_["long_day"],
               "shorten_form": forms_["shorten"], "start_form": forms_["start"], "window_form": forms_["edit_window"],
               "pause": scheduler.clock_paused(), "problems": clock_problems(game, timezone.now())}
    request.current_app = staff_admin_site.name
    return TemplateResponse(request, "lepra/console/game_clock.html", context, status=status)


def _clock_action(request, slug: str, action: str, form_class, call, **form_kwargs):
    """One form of the clock page (POST only, else 405), the game's Procurator's only (404 for anyone else):
    ``form_class`` bound to the POST must be valid, then ``call(game, cleaned_data)`` makes the one service call.
    Back to the page saying the plan is changed; the page again with the form's errors or the service's reason
    inside it (400/403/409) otherwise, nothing changed."""
    game = staff_game(request, slug)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    form = form_class(request.POST, **{k: v(game) for k, v in form_kwargs.items()})
    if not form.is_valid():
        return _clock_page(request, game, status=400, bound={action: form})
    try:
        call(game, form.cleaned_data)
    except RuleViolation as exc:
        form.add_error(None, str(exc))  # shown inside the form that caused it
        return _clock_page(request, game, status=page_status(exc), bound={action: form})
    messages.success(request, _("The plan is changed and the pending events are rescheduled."))
    return HttpResponseRedirect(reverse("admin:game_clock", args=[game.slug], current_app=staff_admin_site.name))


def _time_zone(game: Game) -> str:
    return game.time_zone


def start_clock_view(request, slug: str):
    """Start the game clock with the first day's start (``do_start_game_clock``)."""
    return _clock_action(request, slug, "start", StartClockForm, lambda game, data: (
        clock_services.do_start_game_clock(game, first_day_starts_at=data["first_day_starts_at"],
                                           acting_user=request.user)), time_zone=_time_zone)


def set_day_start_view(request, slug: str):
    """Set the daily start time (``do_set_day_start``, L-DAY-1)."""
    return _clock_action(request, slug, "day_start", DayStartForm, lambda game, data: (
        clock_services.do_set_day_start(game, data["day_start"], acting_user=request.user)))


def set_edit_window_view(request, slug: str):
    """Set the daily post's edit window (``do_set_daily_post_edit_window``, L-POST-2)."""
    return _clock_action(request, slug, "edit_window", EditWindowForm, lambda game, data: (
        clock_services.do_set_daily_post_edit_window(game, data["minutes"], acting_user=request.user)))


def declare_long_day_view(request, slug: str):
    """Declare a day long (``do_declare_long_day``, L-DAY-2)."""
    return _clock_action(request, slug, "long_day", LongDayForm, lambda game, data: (
        clock_services.do_declare_long_day(game, data["day"], data["calendar_days"], acting_user=request.user)))


def shorten_day_view(request, slug: str):
    """Shorten a day (``do_shorten_day``, L-DAY-2)."""
    return _clock_action(request, slug, "shorten", ShortenDayForm, lambda game, data: (
        clock_services.do_shorten_day(game, data["day"], data["hours"], acting_user=request.user,
                                      next_day_starts_at=data["next_day_starts_at"])), time_zone=_time_zone)


def retry_event_view(request, slug: str):
    """Try a failing event of the game again now (``do_retry_scheduled_event``; POST only). An event of another
    game, or none, is the 404 of a missing page; a malformed id is a 400; a refusal is said on the page."""
    game = staff_game(request, slug)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    form = RetryForm(request.POST)
    if not form.is_valid():
        messages.error(request, "; ".join(str(e) for errors in form.errors.values() for e in errors))
        return _clock_page(request, game, status=400)
    event = ScheduledEvent.objects.filter(game=game, pk=form.cleaned_data["event"]).first()
    if event is None:
        raise Http404
    try:
        scheduler.do_retry_scheduled_event(event, acting_user=request.user)
    except RuleViolation as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, _("The event is tried again now."))
    return HttpResponseRedirect(reverse("admin:game_clock", args=[game.slug], current_app=staff_admin_site.name))


class FreeTextForm(forms.Form):
    free_text = forms.CharField(label=gettext_lazy("Your text for the post"), widget=forms.Textarea, required=False)


class EditPostForm(forms.Form):
    title = forms.CharField(label=gettext_lazy("title"), max_length=200)
    body = forms.CharField(label=gettext_lazy("text"), widget=forms.Textarea(attrs={"rows": 30}))


class AppendForm(forms.Form):
    text = forms.CharField(label=gettext_lazy("Append"), widget=forms.Textarea)


def _daily_post_plan(request, slug: str, day: int):
    """The game (the Procurator's, else 404) and the plan of ``day`` (from day 2, else 404)."""
    game = staff_game(request, slug)
    plan = GameDay.objects.filter(game=game, number=day).select_related("post").first()
    if plan is None or day < 2:
        raise Http404
    return game, plan


def _daily_post_form(plan, data=None):
    """The one form the daily post of ``plan`` takes now, and its action: the free text before the draft, the
    draft's edit before publication, an appendix after it."""
    post = plan.post
    if post is None:
        return "free_text", FreeTextForm(data, initial={"free_text": plan.free_text})
    if post.published_at is None:
        return "edit", EditPostForm(data, initial={"title": post.title, "body": post.body})
    return "append", AppendForm(data)


def daily_post_view(request, slug: str, day: int):
    """The Procurator's page of the daily post of ``day`` (L-POST-2): free text before the draft, edit the draft,
    append after publication, each form posted to its own URL (the views below); the page takes no POST (405)."""
    game, plan = _daily_post_plan(request, slug, day)
    if request.method not in ("GET", "HEAD"):
        return HttpResponseNotAllowed(["GET", "HEAD"])
    return _daily_post_page(request, game, plan)


#: The URL name (``admin:daily_post_<name>``) of each form of the daily post page.
_DAILY_POST_URLS = {"free_text": "text", "edit": "edit", "append": "append"}


def _daily_post_page(request, game, plan, *, status: int = 200, form=None):
    """The daily post page of ``plan``; ``form``: a refused bound form shown with its errors."""
    post = plan.post
    form_name, blank = _daily_post_form(plan)
    form_url = reverse(f"admin:daily_post_{_DAILY_POST_URLS[form_name]}", args=[game.slug, plan.number],
                       current_app=staff_admin_site.name)
    context = {**staff_admin_site.each_context(request), "title": _("Daily post, day %(day)d") % {"day": plan.number},
               "subtitle": game.title, "game": game, "plan": plan, "post": post, "form": form or blank,
               "form_url": form_url, "publish_at": post.publish_at if post is not None else None}
    request.current_app = staff_admin_site.name
    return TemplateResponse(request, "lepra/console/daily_post.html", context, status=status)


def _daily_post_action(request, slug: str, day: int, action: str, call):
    """One form of the daily post page (POST only, else 405): the form the post takes now, which must be the one
    of ``action`` (else the page says the post has moved on: 409), valid, then ``call(game, plan, data)``, the
    one service call. Back to the page saying the post is saved; the page again with the reason otherwise."""
    game, plan = _daily_post_plan(request, slug, day)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    form_name, form = _daily_post_form(plan, request.POST)
    if form_name != action:
        messages.error(request, _("This form is out of date: reload the page."))
        return _daily_post_page(request, game, plan, status=409)
    if not form.is_valid():
        return _daily_post_page(request, game, plan, status=400, form=form)
    try:
        call(game, plan, form.cleaned_data)
    except RuleViolation as exc:
        messages.error(request, str(exc))
        return _daily_post_page(request, game, plan, status=page_status(exc), form=form)
    messages.success(request, _("The daily post is saved."))
    return HttpResponseRedirect(reverse("admin:daily_post", args=[game.slug, day], current_app=staff_admin_site.name))


def daily_post_text_view(request, slug: str, day: int):
    """The Procurator's free text for the daily post before the site drafts it (``do_set_daily_post_text``)."""
    return _daily_post_action(request, slug, day, "free_text", lambda game, plan, data: (
        clock_services.do_set_daily_post_text(game, plan.number, data["free_text"], acting_user=request.user)))


def daily_post_edit_view(request, slug: str, day: int):
    """The Procurator's edit of the draft before its publication (``do_edit_daily_post``)."""
    return _daily_post_action(request, slug, day, "edit", lambda game, plan, data: (
        clock_services.do_edit_daily_post(plan.post, title=data["title"], body=data["body"],
                                          acting_user=request.user)))


def daily_post_append_view(request, slug: str, day: int):
    """The Procurator appends to the published post (``do_append_to_daily_post``)."""
    return _daily_post_action(request, slug, day, "append", lambda game, plan, data: (
        clock_services.do_append_to_daily_post(plan.post, data["text"], acting_user=request.user)))


def daily_post_publish_view(request, slug: str, day: int):
    """Publish the draft now, once the day has started (``do_publish_daily_post``; POST only)."""
    game, plan = _daily_post_plan(request, slug, day)
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    try:
        clock_services.do_publish_daily_post(game, day, acting_user=request.user)
    except RuleViolation as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, _("The daily post is published."))
    return HttpResponseRedirect(reverse("admin:daily_post", args=[game.slug, day], current_app=staff_admin_site.name))


class RescheduleVotingForm(forms.Form):
    opens_at = WallClockField(label=gettext_lazy("Voting opens at (game time)"))
    closes_at = WallClockField(label=gettext_lazy("Voting closes at (game time)"))

    def __init__(self, *args, time_zone: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.zone = ZoneInfo(time_zone)

    def clean_opens_at(self):
        return wall_clock_to_utc(self.cleaned_data["opens_at"], self.zone)

    def clean_closes_at(self):
        return wall_clock_to_utc(self.cleaned_data["closes_at"], self.zone)


def reschedule_voting_view(request, session_id: str):
    """A missed voting window (the session of public id ``session_id``), rescheduled in one action (``rulesets.lepra.day.window_services.do_reschedule_missed_voting``) by the
    city's Tribune, the Arbiter or the Procurator; anyone else gets a 404. The form is prefilled with
    ``suggested_window``; refusals (L-DAY-3) are shown in the form."""

    session = VotingSession.objects.select_related("game", "city").filter(public_id=session_id).first()
    if session is None or not can_reschedule(request.user, session):
        raise Http404
    game, now = session.game, timezone.now()
    zone = ZoneInfo(game.time_zone)
    opens, closes = suggested_window(session, now)
    form = RescheduleVotingForm(request.POST if request.method == "POST" else None, time_zone=game.time_zone,
                                initial={"opens_at": timezone.localtime(opens, zone).replace(tzinfo=None),
                                         "closes_at": timezone.localtime(closes, zone).replace(tzinfo=None)})
    if form.is_bound and form.is_valid():
        try:
            do_reschedule_missed_voting(session, form.cleaned_data["opens_at"], form.cleaned_data["closes_at"],
                                        acting_user=request.user)
        except RuleViolation as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, _("The voting is rescheduled."))
            return HttpResponseRedirect(reverse("admin:index", current_app=staff_admin_site.name))
    context = {**staff_admin_site.each_context(request), "title": _("Missed voting: %(city)s, day %(day)d")
               % {"city": session.city.name, "day": session.day}, "subtitle": game.title, "game": game,
               "session": session, "missed": is_missed(session, now), "form": form,
               "local_opens": timezone.localtime(session.opens_at, zone),
               "local_closes": timezone.localtime(session.closes_at, zone)}
    request.current_app = staff_admin_site.name
    return TemplateResponse(request, "lepra/console/reschedule_voting.html", context)


@register_urls(tool="clock")
def _urls(site) -> list:
    """The Procurator's clock page and daily post pages (L-DAY, L-POST-2)."""
    clock = "games/<slug:slug>/clock/"
    post = "games/<slug:slug>/daily-post/<id:day>/"
    return [path(clock, site.admin_view(game_clock_view), name="game_clock"),
            path(f"{clock}start/", site.admin_view(start_clock_view), name="game_clock_start"),
            path(f"{clock}day-start/", site.admin_view(set_day_start_view), name="game_clock_day_start"),
            path(f"{clock}edit-window/", site.admin_view(set_edit_window_view), name="game_clock_edit_window"),
            path(f"{clock}long-day/", site.admin_view(declare_long_day_view), name="game_clock_long_day"),
            path(f"{clock}shorten/", site.admin_view(shorten_day_view), name="game_clock_shorten"),
            path(f"{clock}retry/", site.admin_view(retry_event_view), name="game_clock_retry"),
            path(post, site.admin_view(daily_post_view), name="daily_post"),
            path(f"{post}text/", site.admin_view(daily_post_text_view), name="daily_post_text"),
            path(f"{post}edit/", site.admin_view(daily_post_edit_view), name="daily_post_edit"),
            path(f"{post}append/", site.admin_view(daily_post_append_view), name="daily_post_append"),
            path(f"{post}publish/", site.admin_view(daily_post_publish_view), name="daily_post_publish"),
            path("votings/<pid:session_id>/reschedule/", site.admin_view(reschedule_voting_view),
                 name="reschedule_voting")]


@register_dashboard_links(order=0, tool="clock")
def _schedule_link(request, role) -> list[tuple[str, str]]:
    """The Procurator's "Schedule" entry: the clock (day starts, long and shortened days)."""
    if role.kind != StaffKind.PROCURATOR:
        return []
    return [(_("Schedule: times and pending events"), reverse("admin:game_clock", args=[role.game.slug],
                                                               current_app=staff_admin_site.name))]
