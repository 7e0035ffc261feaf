"""Archive pages and notification pages. Thin: the policy, one service or selector call,
render. Every page works without JavaScript."""
from __future__ import annotations

from datetime import datetime

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from cities.i18n import activate_account_language, activate_game_language
from cities.selectors import game_get
from inboxes import policies
from inboxes.rendering import render_markdown
from kernel.confirm import confirmation_page
from kernel.errors import RuleViolation
from kernel.rulesets import ruleset_of
from kernel.timezones import display_zone_name, time_for

from . import charts, export, selectors, services
from .forms import ConsentForm, MarkAllReadForm, NotificationSettingsForm, TimelineFilterForm
from .models import NotificationKind
from .notifications import attention_everywhere, mentions_for, notification_list_for, unread_badges_for


@login_required
@require_http_methods(["GET", "HEAD"])
def my_consents(request):
    """The resident's one page of consents: each personal or secret inbox whose disclosure waits for
    them, with its give or withdraw button (``give_consent``, ``revoke_consent``)."""
    activate_account_language(request)
    return render(request, "archive/consents.html", {"rows": selectors.consent_rows_for(request.user)})


def _consent_inbox(request):
    """The inbox a consent button names (``ConsentForm``): through the access policy, so a malformed, missing or
    unreadable id is the one 404."""
    form = ConsentForm(request.POST, access=lambda inbox_id: policies.access_inbox_by_id(request.user, inbox_id))
    form.is_valid()  # the only field raises the 404 itself; a valid form always names an inbox
    return form.cleaned_data["inbox"]


@login_required
@require_POST
def give_consent(request):
    """Consent to disclose one inbox after the game, after a confirmation page (a consent cannot be
    withdrawn once the inbox is disclosed): ``do_give_consent``, which decides who may; a refusal is flashed."""
    inbox = _consent_inbox(request)
    activate_game_language(request, inbox.game)
    confirm = confirmation_page(
        request, title=_("Consent to disclose “%(title)s”?") % {"title": inbox.title},
        consequence=_("After the game the inbox opens to everyone once every consent it needs is given; "
                      "once it is disclosed, your consent cannot be withdrawn."),
        confirm_label=_("Consent to disclose"), cancel_url=reverse("archive_consents"))
    if confirm is not None:
        return confirm
    try:
        services.do_give_consent(inbox, acting_user=request.user)
    except RuleViolation as exc:
        flash.error(request, str(exc))
    return redirect("archive_consents")


@login_required
@require_POST
def revoke_consent(request):
    """Withdraw one's consent to disclose an inbox: ``do_revoke_consent``, which decides whether it
    still may be; a refusal is flashed."""
    inbox = _consent_inbox(request)
    try:
        services.do_revoke_consent(inbox, acting_user=request.user)
    except RuleViolation as exc:
        flash.error(request, str(exc))
    return redirect("archive_consents")


@require_POST
def open_inbox(request, slug: str, inbox_id: str):
    """The one logged click that opens an "open to anyone who asks" inbox after the game; then the
    inbox is read in place. A visitor is sent to log in. Anything else is a 404."""
    if not request.user.is_authenticated:
        return redirect(f"{reverse('account_login')}?next={reverse('archive_game', args=[slug])}")
    game = game_get(slug)
    inbox = policies.requestable_inboxes(request.user, game).filter(public_id=inbox_id).select_related("game").first()
    if inbox is None:
        raise Http404("No such inbox.")
    services.do_request_open(inbox, acting_user=request.user)
    return redirect("inbox_thread", inbox.public_id)


def archive_game(request, slug: str):
    """The game's archive front page: after the end, the winner, the scoreboard per city, the cast with
    roles and alignments, the inboxes the viewer reads and those opened on request, links, and the sections the
    game's ruleset adds (``RulesetSpec.archive_sections``, as the viewer may see each). Before the end only the
    readable inboxes and links (no cast list) and the sections the ruleset gives the viewer then."""
    game = game_get(slug)
    activate_game_language(request, game)
    spec = ruleset_of(game)
    front = selectors.front_page_for(request.user, game)
    context = {
        "game": game,
        # The score by city and the cast by city only where the ruleset has cities (another has its own cast).
        "has_cities": spec.has_cities,
        "log_in_to_open": spec.text("archive_log_in_to_open"),
        "finished": selectors.is_finished(game),
        "has_mafia_draw": spec.has_page_section("mafia_draw"),  # its verification page exists after the end
        "front": front,
        "winner_sentence": spec.winner_sentence(front.winner) if front is not None else "",
        "openable": selectors.openable_rows_for(request.user, game),
        "inboxes": selectors.readable_inbox_list(request.user, game),
        "sections": selectors.ruleset_sections_for(request.user, game),
    }
    return render(request, "archive/game.html", context)


def timeline(request, slug: str):
    """The day-by-day timeline of the game, filterable by city number (``?city=``) and inbox kind (``?kind=``),
    with only what the viewer may read."""
    game = game_get(slug)
    activate_game_language(request, game)
    spec = ruleset_of(game)  # the filters offer the game's cities and the inbox kinds its ruleset has
    has_cities = spec.has_cities
    form = TimelineFilterForm(request.GET or None, cities=list(game.cities.order_by("number")) if has_cities else [],
                              kinds=[(k, label) for k, label in spec.inbox_kind_choices if k in spec.inbox_kinds])
    city, kind = form.filters() if form.is_bound else (None, None)
    days = selectors.timeline_for(request.user, game, city=city, kind=kind)
    context = {"game": game, "days": days, "form": form, "has_cities": has_cities}
    return render(request, "archive/timeline.html", context)


def search(request, slug: str):
    """Full-text search over the messages the viewer may read."""
    game = game_get(slug)
    activate_game_language(request, game)
    query = request.GET.get("q", "")[:200]
    results = selectors.search_messages(request.user, game, query)
    return render(request, "archive/search.html", {"game": game, "query": query, "results": results})


def votes(request, slug: str):
    """The votes page: the day votes of the game as its ruleset tables and charts them (its
    ``votes_page_sections``), each as the viewer may read it."""
    game = game_get(slug)
    activate_game_language(request, game)
    sections = selectors.ruleset_sections_for(request.user, game, keys=ruleset_of(game).votes_page_sections)
    return render(request, "archive/votes.html", {"game": game, "sections": sections})


def game_map(request, slug: str):
    """The SVG map of the game: cities, staff, inboxes and who was in which, as the viewer may know it."""
    game = game_get(slug)
    activate_game_language(request, game)
    svg = charts.game_map_svg(request.user, game)
    if request.GET.get("format") == "svg":
        return HttpResponse(svg, content_type="image/svg+xml; charset=utf-8")
    return render(request, "archive/map.html", {"game": game, "svg": svg})


def export_json(request, slug: str):
    """The game as JSON: what the viewer may read."""
    game = game_get(slug)
    response = JsonResponse(export.export_for(request.user, game), json_dumps_params={"ensure_ascii": False, "indent": 1})
    response["Content-Disposition"] = f'attachment; filename="{game.slug}.json"'
    return response


def export_print(request, slug: str):
    """The printable page of the game: what the viewer may read, every readable inbox in full; posts and messages
    rendered from Markdown as on the other pages (``inboxes.rendering``), times in the viewer's display zone with
    the zone's abbreviation."""
    game = game_get(slug)
    activate_game_language(request, game)
    data = export.export_for(request.user, game)
    for item in [*data["posts"], *(m for inbox in data["inboxes"] for m in inbox["messages"])]:
        item["html"] = mark_safe(render_markdown(item.get("text") or ""))  # nh3-cleaned HTML
        item["shown_at"] = time_for(datetime.fromisoformat(item["at"]), request.user, game) if item.get("at") else ""
    spec = ruleset_of(game)  # the winner and the sides in the ruleset's words; a city only where it has cities
    for resident in data["residents"]:
        resident["side"] = spec.wording(f"side_{resident['alignment']}", "") if resident.get("alignment") else ""
    winner = data["game"].get("winner")
    context = {"game": game, "data": data, "has_cities": spec.has_cities,
               "winner_sentence": spec.winner_sentence(winner) if winner else ""}
    return render(request, "archive/print.html", context)


@login_required
def mentions(request):
    """Messages that mention the viewer (by display name or a seat's name), from readable inboxes only, newest first;
        and the unread counts of readable inboxes per game."""
    activate_account_language(request)

    return render(request, "archive/mentions.html",
                  {"mentions": mentions_for(request.user), "badges": unread_badges_for(request.user),
                   "attention": attention_everywhere(request.user, timezone.now())})


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def notification_settings(request):
    """The viewer's own settings: their display zone and the channel of each kind of notification."""
    activate_account_language(request)
    current = services.settings_of(request.user)
    initial = {"time_zone": request.user.time_zone, **{kind: current.channel(kind) for kind in NotificationKind.values}}
    form = NotificationSettingsForm(request.POST or None, initial=initial)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                services.do_update_notification_settings(acting_user=request.user,
                                                         time_zone=form.cleaned_data["time_zone"] or "",
                                                         channels=form.channels())
            except RuleViolation as exc:
                form.add_error(None, str(exc))
            else:
                flash.success(request, _("Your settings are saved."))
                return redirect("archive_notification_settings")
        status = 400
    return render(request, "archive/settings.html", {"form": form}, status=status)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def notification_list(request):
    """The viewer's notifications, newest first, each one shown only while the policy still lets
    them see what it points at; those shown are marked read, and "mark all read" marks the rest."""
    activate_account_language(request)
    if request.method == "POST":
        if MarkAllReadForm(request.POST).is_valid():
            services.do_mark_notifications_read(None, acting_user=request.user)
        return redirect("archive_notifications")
    shown = notification_list_for(request.user)
    response = render(request, "archive/notifications.html",
                      {"notifications": shown, "form": MarkAllReadForm(),
                       "zone": ", ".join(sorted({display_zone_name(request.user, s.notification.game)
                                                 for s in shown}))})
    services.do_mark_notifications_read([s.notification for s in shown if s.unread], acting_user=request.user)
    return response
