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
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone, translation

from cities.models import Game, GameStatus, LifeStatus, Resident, StaffKind
from kernel.confirm import confirmation_page
from kernel.errors import RuleViolation
from staff.console import Need, register_dashboard_links, register_dashboard_needs, register_urls, staff_admin_site

from . import console_selectors, console_services, selectors, services
from . import host_tool_services as host_tools
from .ruleset import M21Ruleset

HOST_KINDS = (StaffKind.PROCURATOR, StaffKind.COHOST)


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


def _act(request, game: Game, which: str, form, url: str) -> str | HttpResponse:
    """Run the service of the posted ``which`` with the valid ``form``; returns the success message, or the
    confirmation page (a response, cancelling back to the console's ``url``) while the modkill or the replacement
    is not confirmed yet."""
    data, user = form.cleaned_data, request.user
    if which == "extend":
        new = services.do_extend_m21_phase(game, data["hours"], acting_user=user)
        return f"The phase now ends at {console_services.wall_time(new, game)}."
    if which == "shorten":
        new = console_services.do_shorten_m21_phase(game, data["hours"], acting_user=user)
        return f"The phase now ends at {console_services.wall_time(new, game)}."
    seat = Resident.objects.filter(game=game, public_id=data["player"]).first()
    if seat is None:  # a choice of the form is a seat of this game; kept for a seat gone since the page loaded
        raise Http404
    confirm = _confirmation(request, game, which, form, seat, url)
    if confirm is not None:
        return confirm
    if which == "modkill":
        console_services.do_modkill_m21_player(seat, reveal_role=data["reveal_role"], acting_user=user)
        return f"{seat.name} is removed from the game."
    if which == "volunteer":
        old_name = seat.name
        taken = host_tools.do_replace_with_volunteer(seat, data["volunteer"], acting_user=user)
        return f"{taken.name} is replacing {old_name}."
    replaced = console_services.do_replace_m21_player_by_login(seat, data["username"], acting_user=user)
    return f"{replaced.name} now plays the seat."


def m21_console_view(request, slug: str):
    """The console page (see the module docstring). POST ``form`` = extend | shorten | vote_count | prod | visibility
    (``public`` = yes | no) | modkill | replace | volunteer; each calls one service and redirects back (a refusal is shown in its form); modkill and replace
    first answer a confirmation page and act on its confirmed POST (``confirmed=yes``)."""
    game = _hosted_game(request, slug)
    with translation.override(M21Ruleset.language):
        return _console(request, game)


def _console(request, game: Game):
    url = reverse("admin:m21_console", args=[game.slug], current_app=staff_admin_site.name)
    which = request.POST.get("form") if request.method == "POST" else None
    living = list(Resident.objects.filter(game=game, status=LifeStatus.ALIVE).order_by("name"))
    seats = list(Resident.objects.filter(game=game).order_by("name"))
    forms_ = {
        "extend": HoursForm(request.POST if which == "extend" else None, prefix="extend"),
        "shorten": HoursForm(request.POST if which == "shorten" else None, prefix="shorten"),
        "modkill": ModkillForm(request.POST if which == "modkill" else None, players=living, prefix="modkill"),
        "replace": ReplaceForm(request.POST if which == "replace" else None, players=seats, prefix="replace"),
        "volunteer": VolunteerForm(request.POST if which == "volunteer" else None, players=seats,
                                   volunteers=host_tools.volunteers_of(game), prefix="volunteer"),
    }
    if which == "visibility":
        public = request.POST.get("public") == "yes"
        try:
            services.do_set_m21_game_thread_public(game, public, acting_user=request.user)
        except RuleViolation as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, "The game thread is public: anyone reads it." if public
                             else "The game thread is members-only: players, hosts and spectators read it.")
        return HttpResponseRedirect(url)
    if which == "prod":
        try:
            prods = host_tools.do_prod_m21_players(game, acting_user=request.user)
        except RuleViolation as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"Prodded: {', '.join(p.name for p in prods)}." if prods
                             else "Everyone has voted and posted twice today: nobody to prod.")
        return HttpResponseRedirect(url)
    if which == "vote_count":
        try:
            services.do_post_vote_count(game, acting_user=request.user)
        except RuleViolation as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, "The vote count is posted in the game thread.")
        return HttpResponseRedirect(url)
    bound = forms_.get(which)
    if bound is not None and bound.is_valid():
        try:
            done = _act(request, game, which, bound, url)
        except RuleViolation as exc:
            bound.add_error(None, str(exc))
        else:
            if not isinstance(done, str):  # the confirmation page of a modkill or replacement
                return done
            messages.success(request, done)
            return HttpResponseRedirect(url)
    now = timezone.now()
    players, notes = console_selectors.player_rows(game), host_tools.replacing_notes(game)
    context = {
        **staff_admin_site.each_context(request), "title": f"Host console: {game.title}", "subtitle": game.title,
        "game": game, "running": game.status == GameStatus.RUNNING,
        "needs": console_selectors.host_needs(game, now), "clock": console_selectors.phase_clock(game, now),
        "day": selectors.day_view(request.user, game, now), "players": players,
        "silent": console_selectors.silent_players(game, now), "offenders": console_selectors.last_offenders(game),
        "stash": console_selectors.stash_of(game), "forms": forms_,
        "to_prod": [(seat.name, [host_tools.PROD_REASONS[r] for r in reasons])
                    for seat, reasons in host_tools.players_to_prod(game, now)],
        "prods": host_tools.prods_of(game), "volunteers": host_tools.volunteers_of(game),
        "thread_public": selectors.settings_of(game).game_thread_public,
        "player_rows": [(row, notes.get(row.resident.pk, "")) for row in players],
    }
    request.current_app = staff_admin_site.name
    response = TemplateResponse(request, "m21/console.html", context, status=400 if bound is not None else 200)
    response.render()  # in English: rendered inside the language override
    return response


@register_urls
def _urls(site) -> list:
    """The M21 host console."""
    return [path("m21/<slug:slug>/", site.admin_view(m21_console_view), name="m21_console")]


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
