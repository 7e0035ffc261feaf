"""The UI language of pages (DESIGN.md "Pages": each ruleset declares its own): a game's pages speak its
ruleset's language; an account's own pages (notifications, consents, mentions, settings, the refusal page, log in
and sign up) speak the language of the account's games when they all speak one, else the browser's (Django's
``LocaleMiddleware`` already chose it)."""
from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.admin.exceptions import DisallowedModelAdminLookup
from django.core.exceptions import RequestDataTooBig
from django.db.models import Q
from django.http import HttpResponseBadRequest
from django.template.defaultfilters import filesizeformat
from django.template.loader import render_to_string
from django.urls import Resolver404, resolve
from django.utils import translation
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.views.defaults import permission_denied as django_permission_denied

from kernel.rulesets import get_ruleset

from .models import Game


def activate_game_language(request, game) -> None:
    """Render the rest of this request in ``game.language`` (Django resets it when the response is done)."""
    translation.activate(game.language)
    request.LANGUAGE_CODE = game.language
    request.game_language = game.language


def account_language(user) -> str | None:
    """The one UI language of the games ``user`` plays, hosts, staffs or signed up for (a language code), or None
    for an anonymous user, an account in no game or one in games of several languages. One query."""
    if user is None or not user.is_authenticated:
        return None
    keys = set(Game.objects.filter(Q(residents__user=user) | Q(staff_roles__user=user) | Q(signups__user=user))
               .values_list("ruleset", flat=True).distinct())
    languages = {get_ruleset(key).language for key in keys}
    return languages.pop() if len(languages) == 1 else None


def _next_game_language(request) -> str | None:
    """The language of the game whose page an anonymous visitor comes from (``?next=``): a path of the site whose
    URL names a game by its ``slug`` (``/games/<slug>/...``, the staff console's ``/staff/games/<slug>/...`` and
    the pages a ruleset mounts there); None for any other path."""
    path = urlsplit(request.GET.get("next", "") or request.POST.get("next", "") or "").path
    try:
        slug = resolve(path).kwargs.get("slug") if path.startswith("/") else None
    except Resolver404:
        slug = None
    if not slug:
        return None
    ruleset = Game.objects.filter(slug=slug).values_list("ruleset", flat=True).first()
    return get_ruleset(ruleset).language if ruleset else None


def activate_account_language(request) -> None:
    """Render the rest of this request in the language of the viewer's games (``account_language``); for a
    visitor not logged in, in that of the game whose page sent them here (``?next=``); else leave the browser's
    language. Game pages never call this: they speak their game's language."""
    language = account_language(request.user) if request.user.is_authenticated else _next_game_language(request)
    if language is not None:
        translation.activate(language)
        request.LANGUAGE_CODE = language


class AccountLanguageMiddleware:
    """Speak the account's language (``activate_account_language``) on the log-in, sign-up and other account
    pages of django-allauth, which are no game's pages. Other views are left alone (no query is added to them)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        """Activate the account's language before an allauth view runs; None (the view runs)."""
        view = getattr(view_func, "view_class", view_func)  # a class-based view's function is Django's
        if getattr(view, "__module__", "").startswith("allauth."):
            activate_account_language(request)


def permission_denied(request, exception=None):
    """The 403 page (``handler403``) in the language of the game whose page refused, else of the account."""
    if getattr(request, "game_language", None) is None:
        activate_account_language(request)
    return django_permission_denied(request, exception)


def bad_request(request, exception=None):
    """The 400 page (``handler400``: a malformed request, or a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE``, which
    Django refuses before any view runs) in the language of the game whose page refused, else of the account's
    games (``activate_account_language``). A body too large is named as such, with the limit; a list filter the
    admin refuses (the staff console's old filters by a game's or a city's database id) says how lists are
    filtered."""
    if getattr(request, "game_language", None) is None:
        activate_account_language(request)
    reason = None
    if isinstance(exception, RequestDataTooBig):
        reason = _("The request is too large: at most %(size)s may be sent at once.") % {
            "size": filesizeformat(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)}
    elif isinstance(exception, DisallowedModelAdminLookup):
        reason = _("This list has no such filter. Use the filters its page offers: the staff console names a game "
                   "by its slug and a city by its public id, never by a database id.")
    return HttpResponseBadRequest(render_to_string("400.html", {"reason": reason}, request=request))


def in_game_language(game: Game, text_fn):
    """Run ``text_fn()`` (which calls gettext) in ``game``'s language and return its result (a lazy string
    rendered): a title or notice stored in the database reads the same whoever's request wrote it."""
    with translation.override(game.language):
        value = text_fn()
        return str(value) if isinstance(value, Promise) else value
