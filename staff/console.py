"""The staff console (DESIGN.md "Rulesets and layers", interfaces): one admin site, mounted at ``/staff/``.

This module holds what every app's console pages build on: the site (``GameStaffAdminSite``,
``staff_admin_site``: entry by ``StaffRole`` only), the policy-scoped read-only base
(``StaffScopedAdmin``, ``ScopedRelatedFilter``), the viewer of the request being served (``current_viewer``,
``staff_roles_of``), helpers for actions' intermediate pages, and three registries the apps fill from their own
``staff_admin.py`` (imported by ``staff.apps.StaffConfig.ready``):

- ``register_urls(provider, tool=...)``: ``provider(site) -> [path(...)]``, pages mounted under ``/staff/``;
- ``register_dashboard_links(provider, order=..., tool=...)``: ``provider(request, role) -> [(label, url)]``, the
  links of a role's dashboard row, sorted by ``order`` (then registration);
- ``register_dashboard_needs(provider, tool=...)``: ``provider(request, role) -> [Need]``, the "what needs you
  now" lines; each must count only objects of the viewer's scope (use the registered ModelAdmin's
  ``get_queryset``).

Tools of one ruleset (``RulesetSpec.console_tools``: a clock, a stage, votings, a court...) are named by
``tool``: a link or line is shown only in the rows of games whose ruleset provides it (``ruleset_of(game)
.provides_console_tool``), a page of such a game refuses with ``NotProvidedByRuleset`` (a clear refusal, see
``mafia_site.middleware.RuleViolationMiddleware``), and a ``StaffScopedAdmin`` with ``console_tool`` (or an action
named in its ``action_tools``) is absent for a viewer with no such game, refused when posted anyway, and acts
only on objects of games that provide it.

Why nothing leaks is said in ``cities.staff_admin`` (the games, residents, inboxes and messages pages): every
queryset starts from the access policy, secrets are never a model field in a page, URL lookups are a whitelist.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial, update_wrapper
from types import MappingProxyType
from typing import ClassVar
from zoneinfo import ZoneInfo

from django.contrib import admin, messages
from django.contrib.admin import AdminSite, RelatedOnlyFieldListFilter, helpers
from django.contrib.admin.views.autocomplete import AutocompleteJsonView
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.core.exceptions import PermissionDenied
from django.core.handlers.exception import response_for_exception
from django.db.models import Q
from django.http import Http404, HttpResponseNotAllowed, HttpResponseRedirect
from django.http.response import HttpResponseBase
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, path, reverse
from django.utils import timezone, translation
from django.utils.html import format_html
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.utils.safestring import mark_safe
from django.utils.translation import gettext, gettext_lazy

from cities.models import HOST_STAFF_KIND, Game, StaffRole
from cities.staff_kinds import staff_kinds_of
from inboxes import moderation_policy, policies
from kernel.confirm import confirmation_page
from kernel.errors import NotProvidedByRuleset, RuleViolation
from kernel.public_ids import is_database_id, is_public_id
from kernel.rulesets import ruleset_of
from mafia_site.middleware import RuleViolationMiddleware

from .console_scope import RulesetScopedList


def game_provides(game, tool: str | None) -> bool:
    """True when ``tool`` (a tool some ruleset declares in ``RulesetSpec.console_tools``, or None for every
    ruleset's) is part of ``game``'s rules."""
    return tool is None or ruleset_of(game).provides_console_tool(tool)


def not_provided(game, tool: str) -> NotProvidedByRuleset:
    """The refusal of ``tool`` for ``game`` (naming its ruleset and the tool)."""
    return ruleset_of(game).missing_console_tool(tool)

# --------------------------------------------------------------------------------------------------------------
# The registries the apps fill (their staff_admin.py)
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Need:
    """One line of the dashboard: ``count`` things of ``label`` wait for the viewer at ``url``."""

    key: str
    label: str
    count: int
    url: str


UrlProvider = Callable[["GameStaffAdminSite"], list]
LinkProvider = Callable[[object, StaffRole], list[tuple[str, str]]]
NeedProvider = Callable[[object, StaffRole], list[Need]]

#: The changelist parameters narrowing to one game (by its slug) and to one city (by its public id), as the list
#: filters by game and city (``ScopedRelatedFilter``) write them: the dashboard's links use them
#: (``changelist_url``), and every changelist with such a filter lists them in ``allowed_lookups``.
GAME_LOOKUP = "game__slug__exact"
CITY_LOOKUP = "city__public_id__exact"
#: An action posted with a selection none of whose keys names an object the viewer may act on (a stale page, an
#: old database id, a malformed key): refused alike for a missing and a forbidden object, nothing changed.
NOTHING_FOUND = gettext_lazy("None of the selected items was found among those you may act on. No items have "
                             "been changed.")

#: Providers of the console's own pages (see ``register_urls``).
CONSOLE_URLS: list[UrlProvider] = []
#: (order, provider) of the dashboard's links (see ``register_dashboard_links``).
DASHBOARD_LINKS: list[tuple[int, LinkProvider]] = []
#: Providers of the dashboard's "what needs you now" lines (see ``register_dashboard_needs``).
DASHBOARD_NEEDS: list[NeedProvider] = []


def _tool_page(view, tool: str):
    """``view`` (an ``admin_view``) refusing with ``NotProvidedByRuleset`` when the game it names (its ``slug``,
    a game where the viewer is staff) or, for a page naming no game, every staff game of the viewer has a ruleset
    without ``tool``. Who may not enter the console at all gets the admin's own answer first."""
    def page(request, *args, **kwargs):
        if staff_admin_site.has_permission(request):
            roles = staff_roles_of(request)
            named = [r.game for r in roles if r.game.slug == kwargs.get("slug")]
            games = named or ([] if "slug" in kwargs else [r.game for r in roles])
            if games and not any(game_provides(game, tool) for game in games):
                language = staff_games_language(request)
                if language is None:
                    raise not_provided(games[0], tool)
                with translation.override(language):  # the refusal page in the viewer's games' language
                    response = _error_response(request, not_provided(games[0], tool))
                response.headers["Content-Language"] = language
                return response
        return view(request, *args, **kwargs)
    return update_wrapper(page, view)


def register_urls(provider: UrlProvider | None = None, *, tool: str | None = None):
    """Mount the pages ``provider(site)`` returns (``path`` objects whose views are wrapped in
    ``site.admin_view``) under ``/staff/``; with ``tool``, each page refuses for a game whose ruleset lacks it
    (``_tool_page``). Usable as ``@register_urls`` or ``@register_urls(tool=...)``; returns ``provider``."""
    def register(func: UrlProvider) -> UrlProvider:
        def urls(site) -> list:
            patterns = func(site)
            if tool is not None:
                for pattern in patterns:
                    pattern.callback = _tool_page(pattern.callback, tool)
            return patterns
        if all(func is not getattr(known, "__wrapped__", known) for known in CONSOLE_URLS):
            CONSOLE_URLS.append(update_wrapper(urls, func))
        return func
    return register(provider) if provider is not None else register


def _for_tool(provider, tool: str | None):
    """``provider(request, role)``, or [] in the row of a game whose ruleset lacks ``tool``."""
    if tool is None:
        return provider

    def provided(request, role) -> list:
        return provider(request, role) if game_provides(role.game, tool) else []
    return update_wrapper(provided, provider)


def register_dashboard_links(provider: LinkProvider | None = None, *, order: int = 100, tool: str | None = None):
    """Add ``provider(request, role) -> [(label, url)]`` to every dashboard row (with ``tool``: only rows of games
    whose ruleset provides it); rows list the links of all providers sorted by ``order``. Usable as
    ``@register_dashboard_links(order=20)``; returns ``provider``."""
    def register(func: LinkProvider) -> LinkProvider:
        if all(func is not getattr(known, "__wrapped__", known) for _o, known in DASHBOARD_LINKS):
            DASHBOARD_LINKS.append((order, _for_tool(func, tool)))
        return func
    return register(provider) if provider is not None else register


def register_dashboard_needs(provider: NeedProvider | None = None, *, tool: str | None = None):
    """Add ``provider(request, role) -> [Need]`` to the "what needs you now" lines of every dashboard row (in
    registration order; with ``tool``: only rows of games whose ruleset provides it). Count only objects of the
    viewer's scope. Usable as ``@register_dashboard_needs`` or with ``(tool=...)``; returns ``provider``."""
    def register(func: NeedProvider) -> NeedProvider:
        if all(func is not getattr(known, "__wrapped__", known) for known in DASHBOARD_NEEDS):
            DASHBOARD_NEEDS.append(_for_tool(func, tool))
        return func
    return register(provider) if provider is not None else register


def changelist_url(model: str, *, game: Game | None = None, city=None, **params) -> str:
    """The console's changelist of ``model`` ("app_model") narrowed to ``game`` (by its slug), to ``city`` (a
    ``City``, by its public id) and by ``params`` (whitelisted lookups only): no database id in the link."""
    if game is not None:
        params = {GAME_LOOKUP: game.slug, **params}
    if city is not None:
        params = {CITY_LOOKUP: city.public_id, **params}
    url = reverse(f"admin:{model}_changelist", current_app=staff_admin_site.name)
    return url + ("?" + urlencode(params) if params else "")


# --------------------------------------------------------------------------------------------------------------
# The viewer and the site
# --------------------------------------------------------------------------------------------------------------
#: The request being served by a staff admin view. ModelAdmin instances are shared by every thread, so the
#: viewer for computed columns is read from here (set by ``GameStaffAdminSite.admin_view`` for the whole view,
#: template rendering included), never stored on the ModelAdmin. Unset means no viewer: secrets stay hidden.
_current_request: ContextVar = ContextVar("staff_admin_request", default=None)


def current_viewer():
    """The user of the staff admin request being served, or None (then every policy answer is "secret")."""
    request = _current_request.get()
    return None if request is None else request.user


def staff_roles_of(request) -> list[StaffRole]:
    """All staff roles of the request's user in every game, cached on the request (one query)."""
    cached = getattr(request, "_staff_admin_roles", None)
    if cached is None:
        user = request.user
        if user is None or not user.is_authenticated or not user.is_active:
            cached = []
        else:
            cached = list(StaffRole.objects.filter(user=user).select_related("game", "city")
                          .order_by("game__title", "game_id", "kind", "city__number"))
            if any(r.city_id is not None for r in cached):  # a city's staff: stand-in periods (staff app)
                cached += policies.standing_in_roles(user)
        request._staff_admin_roles = cached
    return cached


def single_staff_game(request) -> Game | None:
    """The one game where the request's user holds all their staff roles, or None (no role, or several games)."""
    games = {role.game_id: role.game for role in staff_roles_of(request)}
    return next(iter(games.values())) if len(games) == 1 else None


def staff_games_language(request) -> str | None:
    """The UI language (``Game.language``, its ruleset's) shared by all the games where the
    request's user holds a staff role, or None (no role, or games of several languages)."""
    languages = {role.game.language for role in staff_roles_of(request)}
    return next(iter(languages)) if len(languages) == 1 else None


def staff_game_ids(request) -> set[int]:
    """Ids of the games where the request's user holds a staff role."""
    return {role.game_id for role in staff_roles_of(request)}


def tool_game_ids(request, tool: str | None) -> set[int]:
    """Ids of the games where the request's user holds a staff role and whose ruleset provides ``tool``."""
    return {role.game_id for role in staff_roles_of(request) if game_provides(role.game, tool)}


def _error_response(request, exc):
    """The error page of ``exc`` raised inside a console view, rendered now (in the language the view runs in,
    the viewer's games'): a ``RuleViolation`` as the refusal page, a 404 or 403 as Django answers them."""
    if isinstance(exc, RuleViolation):
        return RuleViolationMiddleware(None).process_exception(request, exc)
    return response_for_exception(request, exc)


class _KeyedAutocompleteView(AutocompleteJsonView):
    """Django's autocomplete answer with each object's console key (``url_key_of``) as its id."""

    def serialize_result(self, obj, to_field_name):
        return {"id": str(getattr(obj, url_key_of(type(obj)))), "text": str(obj)}


class GameStaffAdminSite(AdminSite):
    """The admin for game staff: entry by ``StaffRole`` only, dashboard of the user's roles."""

    site_header = gettext_lazy("Mafia Host — game staff console")
    site_title = gettext_lazy("Mafia Host — game staff console")
    index_title = gettext_lazy("Your games")
    index_template = "staff_admin/index.html"

    def __init__(self, name: str = "staff_admin") -> None:
        super().__init__(name=name)
        self.disable_action("delete_selected")

    def has_permission(self, request) -> bool:
        """True for an active account holding at least one game staff role; superuser/staff flags are ignored."""
        return bool(staff_roles_of(request))

    def admin_view(self, view, cacheable=False):
        """Django's admin_view (permission check, never_cache, csrf), with the request published to
        ``current_viewer`` while the view runs and its template renders.

        When all the viewer's staff roles are in one game, the page shows times in that game's time zone (as
        the game's pages do); otherwise in UTC. When all those games have one language (their rulesets',
        ``Game.language``), the page, the admin's own chrome, its flash messages, its redirects and the error
        page of a refusal, a 404 or a 403 raised inside the view are in that language, as the player pages are
        (``cities.i18n``); a viewer staffing games of several languages keeps
        the browser's (LocaleMiddleware). Every label goes through gettext, so a page is wholly in one language;
        only the audit log's sentences are each in their own game's language (``staff.audit_sentences``)."""
        def with_request(request, *args, **kwargs):
            token = _current_request.set(request)
            game = single_staff_game(request)
            language = staff_games_language(request)
            browser_language = translation.get_language()
            browser_code = getattr(request, "LANGUAGE_CODE", None)
            try:
                if game is not None:
                    timezone.activate(ZoneInfo(game.time_zone))
                if language is not None:
                    translation.activate(language)
                    request.LANGUAGE_CODE = language
                try:
                    response = view(request, *args, **kwargs)
                except (Http404, PermissionDenied, RuleViolation) as exc:
                    if language is None:
                        raise
                    response = _error_response(request, exc)  # rendered here, in the page's language
                if callable(getattr(response, "render", None)) and not getattr(response, "is_rendered", True):
                    response.render()
                if language is not None:
                    # Flash messages are stored by MessageMiddleware after this view returns: turn the queued
                    # ones (lazy texts included) into text now, in the page's language.
                    # (Django's storage has no public call for this: ``_prepare`` is what its ``update`` runs.)
                    for message in getattr(messages.get_messages(request), "_queued_messages", ()):
                        message._prepare()
                    response.headers["Content-Language"] = language
                return response
            finally:
                if language is not None:
                    if browser_language is None:
                        translation.deactivate()
                    else:
                        translation.activate(browser_language)
                    if browser_code is not None:
                        request.LANGUAGE_CODE = browser_code
                if game is not None:
                    timezone.deactivate()
                _current_request.reset(token)

        return super().admin_view(update_wrapper(with_request, view), cacheable)

    def autocomplete_view(self, request):
        """Django's autocomplete over the scoped querysets, each object named by its console key (``url_key_of``),
        never by its database id."""
        return _KeyedAutocompleteView.as_view(admin_site=self)(request)

    def get_urls(self):
        """The pages the apps registered (``register_urls``) before the admin's own; "view on site"
        (r/<content type>/<id>/, which answers for any model and id) is not mounted."""
        own = [url for provider in CONSOLE_URLS for url in provider(self)]
        return own + [url for url in super().get_urls() if getattr(url, "name", None) != "view_on_site"]

    def login(self, request, extra_context=None):
        """Logging in is the site's own (allauth): anonymous users go there and come back; a logged-in account
        without a game role is refused (403), whatever its Django flags."""
        target = request.GET.get(REDIRECT_FIELD_NAME, "")
        if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                               require_https=request.is_secure()):
            target = ""
        target = target or reverse("admin:index", current_app=self.name)
        if request.user.is_authenticated:
            if self.has_permission(request):
                return HttpResponseRedirect(target)
            raise PermissionDenied
        return HttpResponseRedirect(reverse("account_login") + "?" + urlencode({REDIRECT_FIELD_NAME: target}))

    def index(self, request, extra_context=None):
        """The dashboard: the user's roles per game, each with the links the apps registered
        (``register_dashboard_links``, in their order) and the "what needs you now" lines
        (``register_dashboard_needs``)."""
        dashboard = []
        for role in staff_roles_of(request):
            links = [link for _order, provider in sorted(DASHBOARD_LINKS, key=lambda item: item[0])
                     for link in provider(request, role)]
            needs = [need for provider in DASHBOARD_NEEDS for need in provider(request, role)]
            # The title the game's ruleset gives its host (a Procurator, or a Host, say), as on the game page.
            title = (ruleset_of(role.game).wording("procurator_title", str(role)) if role.kind == HOST_STAFF_KIND
                     else str(role))
            dashboard.append({"role": role, "title": title, "game": role.game, "links": links, "needs": needs})
        return super().index(request, {"dashboard": dashboard, **(extra_context or {})})


staff_admin_site = GameStaffAdminSite()


#: The shape of a game's slug in a URL (Django's ``slug`` path converter, ``SlugField``'s validator).
_SLUG = re.compile(r"[-a-zA-Z0-9_]+")


def _default_url_key(model) -> str:
    return "public_id" if any(f.name == "public_id" for f in model._meta.concrete_fields) else "pk"


def url_key_of(model) -> str:
    """The field naming objects of ``model`` in the console's URLs, filters and links: its console admin's
    ``url_key_field`` where it is registered, else ``public_id`` where it has one, else ``pk``."""
    model_admin = staff_admin_site._registry.get(model)
    if isinstance(model_admin, StaffScopedAdmin):
        return model_admin.url_key_field()
    return _default_url_key(model)


def well_formed_url_key(model, key: str, value) -> bool:
    """True when ``value`` has the shape of ``model``'s console key ``key``: a public id, a database id in ASCII
    digits, or a slug no longer than the field (anything else names no object, and is never put to the
    database)."""
    if key == "public_id":
        return is_public_id(value)
    if key == "pk":
        return is_database_id(str(value))
    return (isinstance(value, str) and _SLUG.fullmatch(value) is not None
            and len(value) <= (model._meta.get_field(key).max_length or len(value)))


_django_readonly_admin_url = helpers.AdminReadonlyField.get_admin_url


def _readonly_admin_url(self, remote_field, remote_obj):
    """Django's link from an object page to a related object, by the related object's console key on this
    console (``url_key_of``: its public id, a game's slug); unchanged elsewhere (the operators' /admin/)."""
    if self.model_admin is None or self.model_admin.admin_site is not staff_admin_site:
        return _django_readonly_admin_url(self, remote_field, remote_obj)
    opts = remote_field.model._meta
    try:
        url = reverse(f"admin:{opts.app_label}_{opts.model_name}_change",
                      args=[getattr(remote_obj, url_key_of(remote_field.model))], current_app=staff_admin_site.name)
    except NoReverseMatch:
        return str(remote_obj)
    return format_html('<a href="{}">{}</a>', url, remote_obj)


helpers.AdminReadonlyField.get_admin_url = _readonly_admin_url

# --------------------------------------------------------------------------------------------------------------
# The scoped, read-only base
# --------------------------------------------------------------------------------------------------------------

class StaffScopedAdmin(RulesetScopedList, admin.ModelAdmin):
    """Read-only, policy-scoped admin: subclasses give ``scoped_queryset`` and the public ``fields``.

    ``allowed_lookups`` lists the only query parameters a changelist accepts besides the admin's own
    (``q``, ``o``, ``p``, ...): those of the list filters and the dashboard links, over public fields; of them,
    those of a city or of a ruleset's choices only where the list's games have them (``RulesetScopedList``).
    """

    allowed_lookups: frozenset[str] = frozenset()
    #: The field naming an object in the console's URLs, action forms and links (``url_key_field``): None for
    #: the ``public_id`` where the model has one (else the database id); a model whose objects have a public,
    #: unique name may give it instead (a game's ``slug``).
    url_key: ClassVar[str | None] = None
    view_on_site = False
    actions = ()
    show_facets = admin.ShowFacets.NEVER
    #: The ruleset-specific tool (``RulesetSpec.console_tools``) this model's pages are, or None (every
    #: ruleset's); ``action_tools`` maps an action's name to its tool. ``game_field`` leads to the object's game.
    console_tool: ClassVar[str | None] = None
    action_tools: ClassVar[Mapping[str, str]] = MappingProxyType({})
    game_field: ClassVar[str] = "game"
    game_lookup: ClassVar[str] = GAME_LOOKUP

    def scoped_queryset(self, request):
        raise NotImplementedError

    def get_queryset(self, request):
        qs = self.scoped_queryset(request)
        if self.console_tool is not None:
            qs = qs.filter(**{f"{self.game_field}__in": tool_game_ids(request, self.console_tool)})
        ordering = self.get_ordering(request)
        return qs.order_by(*ordering) if ordering else qs

    def _refuse_tool(self, request, tool: str):
        """Raise the ``NotProvidedByRuleset`` of ``tool`` when no staff game of the viewer provides it."""
        roles = staff_roles_of(request)
        if roles and not tool_game_ids(request, tool):
            raise not_provided(roles[0].game, tool)

    def changelist_view(self, request, extra_context=None):
        """Refused (``NotProvidedByRuleset``) when the model's tool, or a posted action's, is no ruleset's of
        the viewer's games; otherwise ``_changelist_view``."""
        if self.console_tool is not None:
            self._refuse_tool(request, self.console_tool)
        action = request.POST.get("action") if request.method == "POST" else None
        if action in self.action_tools:
            self._refuse_tool(request, self.action_tools[action])
        return self._changelist_view(request, extra_context)

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        if self.console_tool is not None:
            self._refuse_tool(request, self.console_tool)
        return super().changeform_view(request, object_id, form_url, extra_context)

    def history_view(self, request, object_id, extra_context=None):
        if self.console_tool is not None:
            self._refuse_tool(request, self.console_tool)
        return super().history_view(request, object_id, extra_context)

    def get_urls(self):
        """Django's admin URLs of the model, after one URL per action (``action_view``): an action's
        intermediate page and its confirmation post there, so that no field names the action to run."""
        info = self.opts.app_label, self.opts.model_name
        own = [path(f"actions/{name}/", self.admin_site.admin_view(partial(self.action_view, name=name)),
                    name=f"{info[0]}_{info[1]}_action_{name}")
               for name in (getattr(action, "__name__", action) for action in self.actions or ())]
        return own + super().get_urls()

    def action_view(self, request, name: str):
        """The submission of the action ``name`` at its own URL (POST only, else 405): its intermediate page's
        form or its confirmation, with the selection (``_selected_action``, keys as the changelist posts them)
        read into the objects in scope (an unknown, forbidden or malformed key names nothing; a selection naming
        nothing is refused with ``NOTHING_FOUND``). Refused as on
        the changelist: ``NotProvidedByRuleset`` for a tool the viewer's games lack, 403 for an action not
        offered to the viewer (``get_actions``). The action then runs with its form bound (``bound_form``); its
        page (a form with errors: 400) or its confirmation is answered, otherwise back to the changelist, which
        shows the services' messages."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if self.console_tool is not None:
            self._refuse_tool(request, self.console_tool)
        if name in self.action_tools:
            self._refuse_tool(request, self.action_tools[name])
        action = self.get_actions(request).get(name)
        if action is None:
            raise PermissionDenied
        changelist = changelist_url(f"{self.opts.app_label}_{self.opts.model_name}")
        posted = request.POST.getlist(helpers.ACTION_CHECKBOX_NAME)
        if not posted:
            messages.warning(request, gettext("Items must be selected in order to perform actions on them. No "
                                              "items have been changed."))
            return HttpResponseRedirect(changelist)
        request.console_action = name  # the action's own submission: ``bound_form`` binds its form to the POST
        request.posted_as_sent = request.POST  # what a confirmation page posts back (kernel.confirm)
        selected = self._selected_pks(request, posted)
        if set(selected) == {"0"}:
            messages.warning(request, gettext(NOTHING_FOUND))
            return HttpResponseRedirect(changelist)
        queryset = self.get_queryset(request).filter(pk__in=selected)
        response = action[0](self, request, queryset)
        return response if isinstance(response, HttpResponseBase) else HttpResponseRedirect(changelist)

    def _selected_pks(self, request, posted: list[str]) -> list[str]:
        """The database ids of the posted action selection: each key a console key (``url_key_field``) of an object
        in scope; anything else becomes "0", which names no row, so the action finds nothing, exactly as for a
        missing id (a selection of nothing but such keys is refused with ``NOTHING_FOUND``)."""
        key = self.url_key_field()
        well_formed = [v for v in posted if well_formed_url_key(self.model, key, v)]
        if key == "pk":
            return [v if v in well_formed else "0" for v in posted]
        by_key = dict(self.get_queryset(request).filter(**{f"{key}__in": well_formed}).values_list(key, "pk"))
        return [str(by_key.get(v, 0)) for v in posted]

    def get_readonly_fields(self, request, obj=None):
        return tuple(self.fields or ())

    def staff_games(self, request) -> list[Game]:
        """The games where the request's user holds a staff role, in the order of their roles."""
        return list({role.game_id: role.game for role in staff_roles_of(request)}.values())

    def has_module_permission(self, request) -> bool:
        return self.admin_site.has_permission(request)

    def has_view_permission(self, request, obj=None) -> bool:
        """Any staff member, except for a tool no ruleset of the viewer's games provides (then the model is
        absent from the console)."""
        if self.console_tool is not None and not tool_game_ids(request, self.console_tool):
            return False
        return self.admin_site.has_permission(request)

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def offers_action(self, request, name: str) -> bool:
        """Whether the action ``name`` is offered to the request's user (only where its service could succeed;
        the service still decides, object by object)."""
        return True

    def get_actions(self, request):
        """The actions offered to the viewer (``offers_action``); an action of a tool (``action_tools``) only when
        one of the viewer's games provides it, and then acting only on objects of such games."""
        actions = {}
        for name, (func, action_name, description) in super().get_actions(request).items():
            if not self.offers_action(request, name):
                continue
            tool = self.action_tools.get(name)
            if tool is not None:
                if not tool_game_ids(request, tool):
                    continue
                func = self._tool_action(func, tool)
            actions[name] = (func, action_name, description)
        return actions

    def _tool_action(self, func, tool: str):
        """``func`` run on the selected objects of games that provide ``tool``; each other game's ruleset is
        named in an error message (nothing is done to its objects)."""
        def run(modeladmin, request, queryset):
            allowed = tool_game_ids(request, tool)
            outside = {role.game for role in staff_roles_of(request) if role.game_id not in allowed}
            refused = queryset.exclude(**{f"{self.game_field}__in": allowed}).values_list(
                f"{self.game_field}_id", flat=True).distinct()
            for game in {g for g in outside if g.pk in set(refused)}:
                messages.error(request, str(not_provided(game, tool)))
            return func(modeladmin, request, queryset.filter(**{f"{self.game_field}__in": allowed}))
        return update_wrapper(run, func)

    # Opaque ids (kernel.public_ids): the console's URLs, action checkboxes and links carry an object's key
    # (``url_key_field``: its public id, a game's slug) instead of the database id, which would count the objects
    # the viewer may not read. A malformed key is the admin's "doesn't exist", never a database error.

    def url_key_field(self) -> str:
        """The field naming this model's objects on the console: ``url_key``, else ``public_id`` when the model
        has one, else ``pk``."""
        return self.url_key or _default_url_key(self.model)

    def get_object(self, request, object_id, from_field=None):
        """The object of the scoped queryset named by ``object_id`` (its console key), or None (the admin's
        "doesn't exist") for a malformed, missing or out-of-scope key."""
        if from_field is not None:
            return super().get_object(request, object_id, from_field)
        key = self.url_key_field()
        if not well_formed_url_key(self.model, key, object_id):
            return None
        if key == "pk":
            return super().get_object(request, object_id, from_field)
        return self.get_queryset(request).filter(**{key: object_id}).first()

    def get_changelist(self, request, **kwargs):
        changelist = super().get_changelist(request, **kwargs)
        key = self.url_key_field()
        if key == "pk":
            return changelist

        class KeyedChangeList(changelist):
            def url_for_result(self, result):
                return reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_change",
                               args=(getattr(result, key),), current_app=self.model_admin.admin_site.name)

        return KeyedChangeList

    def action_checkbox(self, obj):
        """Django's action checkbox, valued with the object's console key."""
        html = super().action_checkbox(obj)
        key = self.url_key_field()
        if key == "pk":
            return html
        return mark_safe(html.replace(f'value="{obj.pk}"', format_html('value="{}"', getattr(obj, key))))  # noqa: S308 - Django's own HTML

    def action_keys(self, pks) -> dict[int, str]:
        """Database id -> the key an action page posts back for it (``url_key_field``)."""
        key = self.url_key_field()
        if key == "pk":
            return {pk: str(pk) for pk in pks}
        return dict(self.model.objects.filter(pk__in=list(pks)).values_list("pk", key))

    def _changelist_view(self, request, extra_context=None):
        """Django's changelist, with the posted action selection read as console keys (``url_key_field``): each
        becomes the database id of an object in scope; anything else names no object (a missing id). An action
        offered to the viewer on a selection naming no object is refused with ``NOTHING_FOUND``."""
        if request.method == "POST" and helpers.ACTION_CHECKBOX_NAME in request.POST:
            data = request.POST.copy()
            selected = self._selected_pks(request, request.POST.getlist(helpers.ACTION_CHECKBOX_NAME))
            if set(selected) == {"0"} and request.POST.get("select_across") != "1" and \
                    request.POST.get("action") in self.get_actions(request):  # else Django's answer to the menu
                messages.warning(request, gettext(NOTHING_FOUND))
                return HttpResponseRedirect(request.get_full_path())
            data.setlist(helpers.ACTION_CHECKBOX_NAME, selected)
            request.posted_as_sent = request.POST  # what a confirmation page posts back (kernel.confirm)
            request.POST = data
        return super().changelist_view(request, extra_context)


class ScopedRelatedFilter(RelatedOnlyFieldListFilter):
    """A filter by a related object, offering only the values present in the scoped queryset, each by the related
    object's console key (``url_key_of``): ``?game__slug__exact=<slug>``, ``?city__public_id__exact=<public
    id>``, never a database id. Always shown, so that its parameter is always applied: Django drops the parameter
    of a filter with one choice, which would turn "?city__public_id__exact=<another city>" into "everything in
    scope" instead of "nothing". An unknown or malformed key filters to nothing."""

    def __init__(self, field, request, params, model, model_admin, field_path):
        # Read by Django's __init__ through ``lookup_kwarg`` before it sets ``field_path``.
        self._key_lookup = f"{field_path}__{url_key_of(field.related_model)}__exact"
        super().__init__(field, request, params, model, model_admin, field_path)

    @property
    def lookup_kwarg(self) -> str:
        return self._key_lookup

    @lookup_kwarg.setter
    def lookup_kwarg(self, value) -> None:
        """Django's own parameter (``<field>__id__exact``) is never used."""

    def field_choices(self, field, request, model_admin):
        """(key, label) of the related objects present in the scoped queryset, in the related admin's order."""
        present = model_admin.get_queryset(request).distinct().values_list(f"{self.field_path}__pk", flat=True)
        related = field.related_model._default_manager.filter(pk__in=present)
        ordering = self.field_admin_ordering(field, request, model_admin)
        if ordering:
            related = related.order_by(*ordering)
        key = url_key_of(field.related_model)
        return [(getattr(obj, key), str(obj)) for obj in related]

    def has_output(self) -> bool:
        return True


def readable_inboxes_for_staff(request):
    """Inboxes the request's user may read (``policies.readable_inboxes``) in the games where they are staff."""
    return policies.readable_inboxes(request.user).filter(game_id__in=staff_game_ids(request))


def _hidden_text_inbox_ids(request) -> set[int]:
    """Ids of the readable inboxes where the user sees hidden texts (moderators); per request."""
    cached = getattr(request, "_staff_admin_hidden_ok", None)
    if cached is None:
        cached = {inbox.pk for inbox in readable_inboxes_for_staff(request).select_related("game")
                  if moderation_policy.can_see_hidden_text(request.user, inbox)}
        request._staff_admin_hidden_ok = cached
    return cached


def role_game_ids(request, kind: str) -> set[int]:
    """Ids of the games where the request's user holds a staff role of ``kind``."""
    return {role.game_id for role in staff_roles_of(request) if role.kind == kind}


def table_role_game_ids(request, table: str) -> set[int]:
    """Ids of the games where the request's user holds a staff role of a kind the game's ruleset lists in its staff
    table ``table`` (``cities.staff_kinds.STAFF_TABLES``: "court_staff_kinds"...). No query beyond
    ``staff_roles_of``."""
    return {role.game_id for role in staff_roles_of(request) if role.kind in staff_kinds_of(role.game, table)}


def city_staff_scope(request) -> Q:
    """A ``Q`` over rows with ``game_id`` and ``city_id``: the cities where the user holds a city's staff role (a
    kind of the ruleset's ``city_staff_kinds``: a Tribune, say), stand-in periods included (``staff_roles_of``
    lists them). Matches nothing for a user who holds none."""
    scope = Q(pk__in=[])
    for role in staff_roles_of(request):
        if role.city_id is not None:
            scope |= Q(game_id=role.game_id, city_id=role.city_id)
    return scope


def action_url(modeladmin, action: str) -> str:
    """The own URL of ``modeladmin``'s action ``action`` (``StaffScopedAdmin.action_view``)."""
    return reverse(f"admin:{modeladmin.opts.app_label}_{modeladmin.opts.model_name}_action_{action}",
                   current_app=modeladmin.admin_site.name)


def action_page(modeladmin, request, *, action: str, title: str, targets, form, submit: str):
    """The intermediate page of ``action``: the selected objects (``targets``: (pk, label) pairs, labels the
    viewer may see) and the form, posted to the action's own URL (``action_url``). The page names each target
    by the key the changelist uses (its public id where the model has one). Status 400 when ``form`` was posted
    and refused (its errors on the page), else 200."""
    targets = list(targets)
    keys = modeladmin.action_keys([pk for pk, _label in targets])
    context = {
        **modeladmin.admin_site.each_context(request),
        "title": title,
        "opts": modeladmin.opts,
        "form": form,
        "targets": [(keys.get(pk, ""), label) for pk, label in targets],
        "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        "action_url": action_url(modeladmin, action),
        "submit_label": submit,
    }
    request.current_app = modeladmin.admin_site.name
    return TemplateResponse(request, "staff_admin/action_form.html", context, status=400 if form.is_bound else 200)


def confirm_action(modeladmin, request, action: str, *, title: str, consequence: str, confirm_label: str,
                   undo: str = ""):
    """The confirmation page of ``modeladmin``'s irreversible action ``action`` (``kernel.confirm``), or None once
    confirmed: it posts the selection and the action's own fields back to the action's own URL, never the
    changelist's action menu; Cancel leads back to the changelist."""
    return confirmation_page(request, title=title, consequence=consequence, confirm_label=confirm_label,
                             cancel_url=changelist_url(f"{modeladmin.opts.app_label}_{modeladmin.opts.model_name}"),
                             undo=undo, post_to=action_url(modeladmin, action),
                             omit=_CHANGELIST_FIELDS)


#: The changelist's own fields of an action's POST (the action menu, its index, "select all"): never re-posted.
_CHANGELIST_FIELDS = frozenset({"action", "index", "select_across"})


def staff_game(request, slug: str, kinds=(HOST_STAFF_KIND,)) -> Game:
    """The game of ``slug`` (a console page's ``games/<slug>/`` URL) in which the request's user holds a staff
    role of one of ``kinds`` (the Procurator by default), from the request's cached roles (``staff_roles_of``);
    ``Http404`` otherwise, alike for a game that does not exist and one the user does not host."""
    game = next((r.game for r in staff_roles_of(request) if r.game.slug == slug and r.kind in kinds), None)
    if game is None:
        raise Http404
    return game


def bound_form(request, form_class, **kwargs):
    """The action's form, bound to the POST when it is the action's own submission (``action_view``, its
    intermediate page's form posted to the action's own URL); unbound when the changelist's action menu asks."""
    return form_class(request.POST if getattr(request, "console_action", None) else None, **kwargs)
