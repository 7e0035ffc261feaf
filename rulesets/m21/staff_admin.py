"""The M21 host's console on the staff console (``/staff/m21/<game slug>/``; RULES.md M-SETUP-2, M-SETUP-4, M-VOTE-5,
M-VOTE-8, M-MAFIA-2, L-REPLACE-1): what needs the hosts now, the phase clock with its planned times (extend,
shorten), the live vote count and posting it in the game thread, replacements, the modkill with or without a role
reveal, and the items in play. The page, its dashboard link and its "what needs you now" lines are registered on
``staff.console`` as every app's ``staff_admin`` module does.

Who sees it: the game's hosts (its Procurator and co-hosts, ``services.is_host``); anyone else, another game's
host included, gets the 404 of a missing page, and the dashboard lines are given only for a host's own role in an
M21 game. Every action is one service call (``console_services``, ``services``); a refusal is shown as it is. The
modkill and the replacement cannot be undone: their first POST shows a confirmation page (``kernel.confirm``) saying
who leaves, whether the role is revealed, who takes over which seat, and changes nothing. The night's submissions
are shown by count only. The page is in English, the language of M21 (whatever the browser's).
"""
from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import Http404, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone, translation

from cities.models import Game, GameStatus, LifeStatus, Resident
from kernel.confirm import confirmation_page
from kernel.errors import RuleViolation, page_status
from rulesets.m21.staff_kinds import StaffKind
from staff.console import Need, register_dashboard_links, register_dashboard_needs, register_urls, staff_admin_site

from . import console_selectors, console_services, selectors, services
from . import host_tool_services as host_tools
from .ruleset import M21Ruleset

HOST_KINDS = (StaffKind.HOST, StaffKind.COHOST)


def _hosted_game(request, slug: str) -> Game:
    """The M21 game of ``slug`` when the request's user hosts it; else the 404 of a missing page."""
    game = Game.objects.filter(slug=slug, ruleset=M21Ruleset.key).first()
    if game is None or not services.is_host(request.user, game):
        raise Http404
    return game


class HoursForm(forms.Form):
    hours = forms.IntegerField(label="Hours", min_value=1, max_value=services.MAX_EXTENSION_HOURS)


class ModkillForm(forms.Form):
    player = forms.ChoiceField(label="Player")
    reveal_role = forms.BooleanField(label="Reveal the role in the game thread", required=False)

    def __init__(self, *args, players=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["player"].choices = [(r.public_id, r.name) for r in players]


class ReplaceForm(forms.Form):
    player = forms.ChoiceField(label="Seat")
    username = forms.CharField(label="Login of the new player", max_length=150)

    def __init__(self, *args, players=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["player"].choices = [(r.public_id, r.name) for r in players]


class VolunteerForm(forms.Form):
    """A seat and a volunteer from the game's replacement list (L-REPLACE-1)."""

    player = forms.ChoiceField(label="Seat")
    volunteer = forms.TypedChoiceField(label="Volunteer", coerce=int)

    def __init__(self, *args, players=(), volunteers=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["player"].choices = [(r.public_id, r.name) for r in players]
        self.fields["volunteer"].choices = [
            (v.pk, f"{v.user.public_name} (login {v.user.username}, since {v.volunteered_at:%d %b %H:%M} UTC)")
            for v in volunteers]


def _confirmation(request, game: Game, which: str, form, seat: Resident, cancel_url: str) -> HttpResponse | None:
    """The confirmation page of the modkill or the replacement (both cannot be undone; M-SETUP-4, L-REPLACE-1)
    with the valid ``form`` of ``which`` on ``seat``; None once the POST carries the confirmation."""
    data = form.cleaned_data
    if which == "modkill":
        reveal = ("The game thread announces it and names their role." if data["reveal_role"]
                  else "The game thread announces it without naming their role.")
        return confirmation_page(
            request, title="Modkill this player?", confirm_label="Modkill", cancel_url=cancel_url,
            consequence=f"{seat.name} is removed from the game of “{game.title}” as dead. {reveal}")
    if which == "volunteer":
        chosen = dict(form.fields["volunteer"].choices).get(data["volunteer"], "")
        return confirmation_page(
            request, title="Replace this player?", confirm_label="Replace", cancel_url=cancel_url,
            consequence=f"The volunteer {chosen} takes over the seat of {seat.name} in “{game.title}” with its "
                        f"role, items and history; {seat.name} no longer plays in the game.")
    return confirmation_page(
        request, title="Replace this player?", confirm_label="Replace", cancel_url=cancel_url,
        consequence=f"The account with the login “{data['username'].strip()}” takes over the seat of {seat.name} "
                    f"in “{game.title}” with its role; {seat.name} no longer plays in the game.")


def _console_url(game: Game) -> str:
    return reverse("admin:m21_console", args=[game.slug], current_app=staff_admin_site.name)


def _console_forms(game: Game, bound: dict | None = None) -> dict:
    """The console's forms, blank, but ``bound`` ({name: bound form}: a refused form shown with its errors)."""
    seats = _seats(game)
    forms_ = {
        "extend": HoursForm(prefix="extend"),
        "shorten": HoursForm(prefix="shorten"),
        "modkill": ModkillForm(players=_living(game), prefix="modkill"),
        "replace": ReplaceForm(players=seats, prefix="replace"),
        "volunteer": VolunteerForm(players=seats, volunteers=host_tools.volunteers_of(game), prefix="volunteer"),
    }
    return forms_ | (bound or {})


def m21_console_view(request, slug: str):
    """The console page (see the module docstring); each of its buttons posts to its own URL (the views below),
    so the page itself takes no POST (405)."""
    game = _hosted_game(request, slug)
    if request.method not in ("GET", "HEAD"):
        return HttpResponseNotAllowed(["GET", "HEAD"])
    with translation.override(M21Ruleset.language):
        return _console_page(request, game)


def _console_page(request, game: Game, *, status: int = 200, bound: dict | None = None) -> TemplateResponse:
    now = timezone.now()
    players, notes = console_selectors.player_rows(game), host_tools.replacing_notes(game)
    context = {
        **staff_admin_site.each_context(request), "title": f"Host console: {game.title}", "subtitle": game.title,
        "game": game, "running": game.status == GameStatus.RUNNING,
        "needs": console_selectors.host_needs(game, now), "clock": console_selectors.phase_clock(game, now),
        "day": selectors.day_view(request.user, game, now), "players": players,
        "silent": console_selectors.silent_players(game, now), "offenders": console_selectors.last_offenders(game),
        "stash": console_selectors.stash_of(game), "forms": _console_forms(game, bound),
        "to_prod": [(seat.name, [host_tools.PROD_REASONS[r] for r in reasons])
                    for seat, reasons in host_tools.players_to_prod(game, now)],
        "prods": host_tools.prods_of(game), "volunteers": host_tools.volunteers_of(game),
        "thread_public": selectors.settings_of(game).game_thread_public,
        "player_rows": [(row, notes.get(row.resident.pk, "")) for row in players],
    }
    request.current_app = staff_admin_site.name
    response = TemplateResponse(request, "m21/console.html", context, status=status)
    response.render()  # in English: rendered inside the language override
    return response


def _console_action(request, slug: str, name: str, call, form_class=None, **form_kwargs):
    """One button of the console (POST only, else 405): ``form_class`` (None for a button without input) bound
    with ``name`` as its prefix must be valid, then ``call(game, form)`` makes the one service call and returns
    the success message, or a confirmation page to answer first. Back to the console on success; a refusal is
    said on the console (in the refused form, with 400/403/409, for a button with a form) and changes nothing."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    game = _hosted_game(request, slug)
    with translation.override(M21Ruleset.language):
        form = None
        if form_class is not None:
            form = form_class(request.POST, prefix=name, **{k: v(game) for k, v in form_kwargs.items()})
            if not form.is_valid():
                return _console_page(request, game, status=400, bound={name: form})
        try:
            done = call(game, form)
        except RuleViolation as exc:
            if form is None:
                messages.error(request, str(exc))
                return HttpResponseRedirect(_console_url(game))
            form.add_error(None, str(exc))
            return _console_page(request, game, status=page_status(exc), bound={name: form})
        if isinstance(done, HttpResponse):  # the confirmation page of a modkill or a replacement
            return done
        messages.success(request, done)
        return HttpResponseRedirect(_console_url(game))


def _seat_of(game: Game, form) -> Resident:
    """The seat a valid form names (a choice of the form is a seat of this game; 404 for a seat gone since)."""
    seat = Resident.objects.filter(game=game, public_id=form.cleaned_data["player"]).first()
    if seat is None:
        raise Http404
    return seat


def _living(game: Game) -> list[Resident]:
    """The living players of ``game`` by name (the modkill's choices)."""
    return list(Resident.objects.filter(game=game, status=LifeStatus.ALIVE).order_by("name"))


def _seats(game: Game) -> list[Resident]:
    """Every seat of ``game`` by name (the replacements' choices)."""
    return list(Resident.objects.filter(game=game).order_by("name"))


def extend_phase(request, slug: str):
    """The hosts extend the current phase by some hours (M-SETUP-2): ``do_extend_m21_phase``."""
    def call(game, form):
        new = services.do_extend_m21_phase(game, form.cleaned_data["hours"], acting_user=request.user)
        return f"The phase now ends at {console_services.wall_time(new, game)}."
    return _console_action(request, slug, "extend", call, HoursForm)


def shorten_phase(request, slug: str):
    """The hosts shorten the current phase by some hours (M-SETUP-2): ``do_shorten_m21_phase``."""
    def call(game, form):
        new = console_services.do_shorten_m21_phase(game, form.cleaned_data["hours"], acting_user=request.user)
        return f"The phase now ends at {console_services.wall_time(new, game)}."
    return _console_action(request, slug, "shorten", call, HoursForm)


def post_vote_count(request, slug: str):
    """The hosts post the live vote count in the game thread (M-VOTE-8): ``do_post_vote_count``."""
    def call(game, _form):
        services.do_post_vote_count(game, acting_user=request.user)
        return "The vote count is posted in the game thread."
    return _console_action(request, slug, "vote_count", call)


def prod_players(request, slug: str):
    """The hosts prod the players who have not voted or posted twice today (M-VOTE-5): ``do_prod_m21_players``."""
    def call(game, _form):
        prods = host_tools.do_prod_m21_players(game, acting_user=request.user)
        return (f"Prodded: {', '.join(p.name for p in prods)}." if prods
                else "Everyone has voted and posted twice today: nobody to prod.")
    return _console_action(request, slug, "prod", call)


def make_thread_public(request, slug: str):
    """The hosts open the game thread to anyone (M-SETUP-6): ``do_set_m21_game_thread_public``."""
    def call(game, _form):
        services.do_set_m21_game_thread_public(game, True, acting_user=request.user)
        return "The game thread is public: anyone reads it."
    return _console_action(request, slug, "thread_public", call)


def make_thread_members_only(request, slug: str):
    """The hosts close the game thread to all but its members (M-SETUP-6): ``do_set_m21_game_thread_public``."""
    def call(game, _form):
        services.do_set_m21_game_thread_public(game, False, acting_user=request.user)
        return "The game thread is members-only: players, hosts and spectators read it."
    return _console_action(request, slug, "thread_members_only", call)


def modkill_player(request, slug: str):
    """The hosts remove a living player as dead (M-SETUP-4), with or without revealing the role, after a
    confirmation page: ``do_modkill_m21_player``."""
    def call(game, form):
        seat = _seat_of(game, form)
        confirm = _confirmation(request, game, "modkill", form, seat, _console_url(game))
        if confirm is not None:
            return confirm
        console_services.do_modkill_m21_player(seat, reveal_role=form.cleaned_data["reveal_role"],
                                               acting_user=request.user)
        return f"{seat.name} is removed from the game."
    return _console_action(request, slug, "modkill", call, ModkillForm, players=_living)


def replace_player(request, slug: str):
    """The hosts give a seat to another account by its login (L-REPLACE-1), after a confirmation page:
    ``do_replace_m21_player_by_login``."""
    def call(game, form):
        seat = _seat_of(game, form)
        confirm = _confirmation(request, game, "replace", form, seat, _console_url(game))
        if confirm is not None:
            return confirm
        replaced = console_services.do_replace_m21_player_by_login(seat, form.cleaned_data["username"],
                                                                   acting_user=request.user)
        return f"{replaced.name} now plays the seat."
    return _console_action(request, slug, "replace", call, ReplaceForm, players=_seats)


def replace_with_volunteer(request, slug: str):
    """The hosts give a seat to a volunteer of the replacement list (L-REPLACE-1), after a confirmation page:
    ``do_replace_with_volunteer``."""
    def call(game, form):
        seat = _seat_of(game, form)
        confirm = _confirmation(request, game, "volunteer", form, seat, _console_url(game))
        if confirm is not None:
            return confirm
        old_name = seat.name
        taken = host_tools.do_replace_with_volunteer(seat, form.cleaned_data["volunteer"], acting_user=request.user)
        return f"{taken.name} is replacing {old_name}."
    return _console_action(request, slug, "volunteer", call, VolunteerForm, players=_seats,
                           volunteers=host_tools.volunteers_of)


@register_urls
def _urls(site) -> list:
    """The M21 host console and its buttons, each at its own URL."""
    return [path("m21/<slug:slug>/", site.admin_view(m21_console_view), name="m21_console"),
            *(path(f"m21/<slug:slug>/{route}/", site.admin_view(view), name=f"m21_console_{name}")
              for route, view, name in (
                  ("extend", extend_phase, "extend"), ("shorten", shorten_phase, "shorten"),
                  ("vote-count", post_vote_count, "vote_count"), ("prod", prod_players, "prod"),
                  ("thread/public", make_thread_public, "thread_public"),
                  ("thread/members-only", make_thread_members_only, "thread_members_only"),
                  ("modkill", modkill_player, "modkill"), ("replace", replace_player, "replace"),
                  ("volunteer", replace_with_volunteer, "volunteer")))]


def _is_m21_host_role(role) -> bool:
    return role.kind in HOST_KINDS and role.game.ruleset == M21Ruleset.key


@register_dashboard_links(order=0)
def _console_link(request, role) -> list[tuple[str, str]]:
    """A host's (or co-host's) entry to the M21 console of their game."""
    if not _is_m21_host_role(role):
        return []
    return [("M21 host console", reverse("admin:m21_console", args=[role.game.slug], current_app=staff_admin_site.name))]


@register_dashboard_needs
def _host_needs(request, role) -> list[Need]:
    """The "what needs you now" lines of an M21 host's role: ``console_selectors.host_needs``, by count."""
    if not _is_m21_host_role(role):
        return []
    url = reverse("admin:m21_console", args=[role.game.slug], current_app=staff_admin_site.name)
    return [Need(n.key, n.label, n.count, url) for n in console_selectors.host_needs(role.game, timezone.now())]
