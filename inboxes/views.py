"""Inbox pages: "my inboxes" and a thread. Thin: parse, access through the policy, one service or selector."""
from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.db import OperationalError
from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from cities.i18n import activate_game_language
from cities.selectors import game_get
from inboxes import membership_services, moderation_policy, page_policy, posting, read_marks
from inboxes.hooks import post_hook_for
from kernel import live
from kernel.busy import DatabaseBusy, is_database_busy, retry_after_seconds
from kernel.confirm import confirmation_page
from kernel.errors import InvalidInput, NotAllowed, RuleViolation, WrongState
from kernel.public_ids import new_idempotency_key
from kernel.rulesets import ruleset_of

from . import policies, selectors, services
from .forms import EditMessageForm, PostMessageForm, SecretInboxForm
from .live_readers import next_access_change
from .page_policy import offers_secret_inbox


@login_required
def my_inboxes(request, slug: str):
    """The inboxes of a game the viewer may read, with unread counts (each computed for this viewer)."""
    game = game_get(slug)
    activate_game_language(request, game)
    inboxes = selectors.inbox_list_for(request.user, game)
    context = {
        "game": game,
        "offers_secret_inbox": offers_secret_inbox(request.user, game),
        "active": [i for i in inboxes if i.is_open],
        "closed": [i for i in inboxes if not i.is_open],
    }
    return render(request, "inboxes/my_inboxes.html", context)


_STATUS = {InvalidInput: 400, NotAllowed: 403, WrongState: 409, DatabaseBusy: 503}


@require_http_methods(["GET", "HEAD", "POST"])
def inbox_thread(request, inbox_id: str):
    """One inbox: a page of messages (newest page by default) and, where the policy allows, the post form.

    A missing or unreadable inbox is one 404 (``access_inbox_by_id``). A refused post re-renders the page with
    the reason and status 400 (bad input), 403 (may read but not post, e.g. banned), 409 (inbox closed) or 503
    with ``Retry-After`` (the database was busy: the inbox's lock not obtained within ``DATABASE_LOCK_TIMEOUT_MS``,
    ``kernel.busy``); the typed text stays in the form. Posted with htmx, the refusal is the form's feedback.
    """
    snapshot = _live_snapshot(request, inbox_id)  # before any read the page's poll token stands for
    refusal = None
    if request.method == "POST" and request.user.is_authenticated:
        form = PostMessageForm(request.POST)
        if form.is_valid():
            # The inbox is locked and read, once, through the policy, in the post's transaction.
            try:
                message = posting.do_post_message_by_id(
                    inbox_id, form.cleaned_data["text"], acting_user=request.user,
                    idempotency_key=form.cleaned_data["idempotency_key"] or None)
            except RuleViolation as exc:
                refusal = exc
            except OperationalError as exc:
                if not is_database_busy(exc):
                    raise
                refusal = DatabaseBusy()  # rolled back: nothing stored; the page below reads without locking
            else:
                if request.htmx:  # posted from an open page: no reload; the live poll fetches the new message
                    # The form stays on the page: its next post needs a fresh idempotency key (swapped out of band,
                    # so that the form's reset keeps it), else it would be taken for a re-submission of this one.
                    fresh_input = format_html('<input type="hidden" name="idempotency_key" value="{}" '
                                              'id="id_idempotency_key" hx-swap-oob="true">', new_idempotency_key())
                    return HttpResponse(fresh_input, headers={"HX-Trigger": "thread-refresh"})
                return redirect(f"{reverse('inbox_thread', args=[message.inbox.public_id])}#latest")
    inbox = policies.access_inbox_by_id(request.user, inbox_id)
    activate_game_language(request, inbox.game)
    status = 200
    error = None
    fresh_key = None
    if request.method != "POST":
        form = PostMessageForm(initial={"text": _prefill(request, inbox)})
    elif not request.user.is_authenticated:
        return redirect(f"{reverse('account_login')}?next={request.path}")
    else:
        if refusal is not None:
            error = str(refusal)
            status = _STATUS.get(type(refusal), 400)
            # Nothing was stored: the form shown again (or kept on an open page) gets a fresh key, so that
            # sending the kept text again is a new post, not a replay of the refused one.
            data = request.POST.copy()
            data["idempotency_key"] = fresh_key = new_idempotency_key()
            form = PostMessageForm(data)
            form.is_valid()
        else:
            error = "; ".join(str(e) for errs in form.errors.values() for e in errs)
            status = 400
        if request.htmx:  # the refusal goes into the form's feedback area (swapped: 200); the typed text stays
            response = render(request, "inboxes/_post_error.html",
                              {"error": error, "fresh_key": fresh_key})
            response["X-Post-Refused"] = str(status)
            if status == DatabaseBusy.status:
                response["Retry-After"] = str(retry_after_seconds())
            return response
    response = _render_thread(request, inbox, form=form, error=error, status=status, snapshot=snapshot)
    if status == DatabaseBusy.status:
        response["Retry-After"] = str(retry_after_seconds())
    return response


#: The longest text a link may put in the post box (``?say=``): a command or a short phrase, not a message.
PREFILL_MAX_LENGTH = 200


def _prefill(request, inbox) -> str:
    """The post box's text from the page's link, the author still to send it: ``?quote=<position>`` quotes that
    message of the thread (Markdown ``>``, its author named; a quote carries no command), ``?say=<text>`` (at most
    ``PREFILL_MAX_LENGTH`` characters) puts a short text, such as a vote, in the box. Empty otherwise, and for a
    position the viewer does not read or a hidden message."""
    position = request.GET.get("quote")
    if position:
        try:
            message = selectors.message_at_position(inbox, position, request.user)
        except Http404:
            return ""
        if message.is_hidden:
            return ""
        quoted = "\n".join(f"> {line}" if line.strip() else ">" for line in message.body.splitlines())
        return f"> **{message.author_name}** wrote:\n>\n{quoted}\n\n"
    return request.GET.get("say", "")[:PREFILL_MAX_LENGTH]


def _render_thread(request, inbox, *, form, error, status, page=None, snapshot=None):
    thread = selectors.thread_page_for(request.user, inbox, page if page is not None else request.GET.get("page"))
    messages_on_page = list(thread.page.object_list)
    # A page that shows nothing new writes nothing (its read mark already covers it): most views are reads only.
    if (request.user.is_authenticated and messages_on_page and thread.marks_read and thread.shows_unread
            and request.method in ("GET", "HEAD")):
        read_marks.do_mark_inbox_read(inbox, acting_user=request.user, up_to=messages_on_page[-1].received_at)
    now = timezone.now()
    denial = policies.post_denial_reason(request.user, inbox, now) if request.user.is_authenticated else None
    predecessor, successor = selectors.chain_links_for(request.user, inbox)
    live = inbox.is_open and thread.page.number == thread.page.paginator.num_pages
    live_after = (thread.page.end_index() if messages_on_page else 0) if live else None
    context = {
        "live_after": live_after,
        "live_url": _live_url(request, inbox, live_after, snapshot) if live else None,
        "live_interval": settings.MAFIA_LIVE_POLL_SECONDS,
        "inbox": inbox,
        "game": inbox.game,
        "page": thread.page,
        "first_unread": thread.first_unread,
        "first_unread_page": ((thread.first_unread - 1) // settings.MAFIA_MESSAGES_PER_PAGE + 1
                              if thread.first_unread else None),
        "messages_on_page": messages_on_page,
        "positioned": list(enumerate(messages_on_page, start=thread.page.start_index())),
        "members": thread.members,
        "show_hidden_text": thread.show_hidden_text,
        "can_moderate": thread.show_hidden_text,
        "editable": moderation_policy.editable_positions(request.user, inbox, messages_on_page,
                                                thread.page.start_index() or 1, now),
        "can_leave": page_policy.can_leave_inbox(request.user, inbox),
        "names_authors": page_policy.names_message_authors(inbox),
        "night_link": page_policy.links_night_page(inbox),
        "predecessor": predecessor,
        "successor": successor,
        "form": form,
        "can_post": request.user.is_authenticated and denial is None,
        "denial": denial,
        "error": error,
        **_hook_boxes(request.user, inbox),
        "nominate_link": page_policy.offers_nomination_link(request.user, inbox),
        "thread_links": ruleset_of(inbox.game).thread_links(request.user, inbox,
                                                            can_moderate=thread.show_hidden_text),
    }
    return render(request, "inboxes/thread.html", context, status=status)


#: At most this many new messages are appended to an open page at once; beyond, the page offers the newest page.
LIVE_LIMIT = 50


@require_http_methods(["GET", "HEAD"])
def inbox_live(request, inbox_id: str):
    """What is new in an open thread page (htmx polls it): the messages after position ``after`` (query
    parameter, 0 for an empty thread), the next poll, and, in a voting inbox or precinct, the standing tally
    out of band. Access is decided by the policy at each request: a reader who lost access gets the same 404 as
    for a missing inbox, and the poll stops. Shown messages are marked read when nothing unread lies before
    them. Nothing new is an empty 204, the same answer as the cheap path's (``kernel.live``). A malformed
    ``after`` is a 400."""
    snapshot = _live_snapshot(request, inbox_id)  # before the access and the messages are read
    inbox = policies.access_inbox_by_id(request.user, inbox_id)
    activate_game_language(request, inbox.game)
    raw = request.GET.get("after", "")
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 9):
        return HttpResponseBadRequest(_("Malformed position."))
    after = int(raw)
    update = selectors.thread_updates_for(request.user, inbox, after, LIVE_LIMIT)
    shown = [m for _pos, m in update.messages]
    if not shown and not update.more:  # the shortcut's very answer (``kernel.live``); the token stands again
        return live.still(request, _readers_versions(request, inbox, snapshot),
                          until=_token_until(request, inbox.game_id))
    if request.user.is_authenticated and shown and update.marks_read and update.shows_unread:
        read_marks.do_mark_inbox_read(inbox, acting_user=request.user, up_to=shown[-1].received_at)
    show_hidden = moderation_policy.can_see_hidden_text(request.user, inbox)
    context = {
        "inbox": inbox, "game": inbox.game, "new_messages": update.messages,
        "names_authors": page_policy.names_message_authors(inbox),
        "live_after": after + len(shown), "live_interval": settings.MAFIA_LIVE_POLL_SECONDS,
        "live_url": _live_url(request, inbox, after + len(shown), snapshot),
        "was_empty": after == 0,
        "more": update.more,
        "more_url": f"{reverse('inbox_thread', args=[inbox.public_id])}?page=last#latest" if update.more else None,
        "editable": moderation_policy.editable_positions(request.user, inbox, shown, after + 1, timezone.now()),
        "show_hidden_text": show_hidden, "can_moderate": show_hidden,
        **(_hook_boxes(request.user, inbox) if shown else {"tally": None}),
    }
    return render(request, "inboxes/_live.html", context)


@require_http_methods(["GET", "HEAD"])
def unread_badge(request, slug: str):
    """The top bar's unread count for one game (htmx polls it): the messages received after the viewer's read
    marks in the inboxes the policy lets them read now. Empty for an anonymous visitor. The next poll's URL
    carries the count shown (``n``): a poll that finds the same count is an empty 204, the same answer as the
    cheap path's (``kernel.live``)."""
    game = game_get(slug)
    activate_game_language(request, game)
    unread = 0
    access = inboxes = None
    if request.user.is_authenticated:
        # The poll token's versions are read before what they stand for: the game's and the viewer's before the
        # inboxes are listed, each inbox's before its messages are counted. Only the inboxes whose new messages
        # the viewer may see are in it (``selectors.live_inbox_ids``).
        access = live.snapshot(live.poll_keys(request.user, game.pk, reads=True))
        if access is not None:
            inboxes = live.snapshot([live.inbox_key(pk) for pk in selectors.live_inbox_ids(request.user, game)])
        unread = sum(i.unread for i in selectors.inbox_list_for(request.user, game))
    if request.GET.get("n") == str(unread):
        return live.still(request, access, inboxes, until=_token_until(request, game.pk))
    url = f"{reverse('unread_badge', args=[game.slug])}?n={unread}"
    if request.user.is_authenticated:
        url = live.poll_url(request, url, access, inboxes, until=_token_until(request, game.pk))
    return render(request, "inboxes/_unread_badge.html", {"game": game, "unread": unread, "live_url": url,
                                                          "live_interval": settings.MAFIA_LIVE_BADGE_SECONDS})


def _live_snapshot(request, inbox_id):
    """The versions an inbox page's or poll's token stands for (``kernel.live``), read before the page's reads;
    None when the shortcut is off or the id names no inbox."""
    if not live.enabled():
        return None
    ids = selectors.inbox_live_ids(inbox_id)
    return live.snapshot(live.poll_keys(request.user, ids[1], [ids[0]])) if ids is not None else None


def _readers_versions(request, inbox, snapshot):
    """``snapshot`` less what the viewer may not know: the inbox's version when their view of it stops at a time
    (``policies.message_cutoff``: a dead seat in a dated inbox), so that a later post there changes nothing in how
    their polls are answered (their reader version stands for the cutoff)."""
    if snapshot is not None and policies.message_cutoff(request.user, inbox) is not None:
        return live.without(snapshot, [live.inbox_key(inbox.pk)])
    return snapshot


def _live_url(request, inbox, after: int, snapshot) -> str:
    """The next poll's URL of an open thread page: new messages after position ``after``, with a poll token."""
    return live.poll_url(request, f"{reverse('inbox_live', args=[inbox.public_id])}?after={after}",
                         _readers_versions(request, inbox, snapshot), until=_token_until(request, inbox.game_id))


def _token_until(request, game_id: int):
    """The next planned time at which what the viewer may read in the game changes by itself (a poll token never
    stands past it, ``live_readers.next_access_change``); None when the shortcut is off."""
    return next_access_change(request.user, game_id, timezone.now()) if live.enabled() else None


def _hook_boxes(user, inbox) -> dict:
    """What the inbox's post hook shows above the thread, as the page's context: ``tally`` (``hook.thread_box``: a
    voting inbox's or a precinct's standing tally, or None) rendered by ``tally_template``, and
    ``thread_head_template`` ("" for none); the templates are the hook's (``inboxes.hooks.PostHook``)."""
    hook = post_hook_for(inbox)
    if hook is None:
        return {"tally": None, "tally_template": "", "thread_head_template": ""}
    return {"tally": hook.thread_box(user, inbox), "tally_template": hook.thread_box_template,
            "thread_head_template": hook.thread_head_template}


def _thread_url(inbox, position: int) -> str:
    page = (position - 1) // settings.MAFIA_MESSAGES_PER_PAGE + 1
    return f"{reverse('inbox_thread', args=[inbox.public_id])}?page={page}#n{position}"


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def message_edit(request, inbox_id: str, position: int):
    """Edit one's own message within 10 minutes: a form with the current text; the thread shows the
    earlier versions to every reader. The message is addressed by its position in the thread, not its id.
    A refusal re-renders the form with the reason and status 400 / 403 / 409."""
    inbox = policies.access_inbox_by_id(request.user, inbox_id)
    activate_game_language(request, inbox.game)
    message = selectors.message_at_position(inbox, position, request.user)
    status, error, form = 200, None, None
    if request.method == "POST":
        form = EditMessageForm(request.POST)
        if form.is_valid():
            try:
                membership_services.do_edit_message(message, form.cleaned_data["text"], acting_user=request.user)
            except RuleViolation as exc:
                error, status = str(exc), _STATUS.get(type(exc), 400)
            else:
                return redirect(_thread_url(inbox, position))
        else:
            error = "; ".join(str(e) for errs in form.errors.values() for e in errs)
            status = 400
        message.refresh_from_db()
    # The form (and so the text) is shown only while the viewer may edit: never a hidden text to a non-author.
    denial = moderation_policy.edit_denial_reason(request.user, message, timezone.now())
    if denial is not None:
        form, error = None, error or denial
        status = status if status != 200 else 403
    elif form is None:
        form = EditMessageForm(initial={"text": message.body})
    context = {"inbox": inbox, "game": inbox.game, "position": position, "form": form, "error": error,
               "thread_url": _thread_url(inbox, position)}
    return render(request, "inboxes/edit_message.html", context, status=status)


@login_required
@require_http_methods(["POST"])
def message_hide(request, inbox_id: str, position: int):
    """Hide a message for abuse, by the inbox's moderators (nothing is deleted); then back to the message."""
    inbox = policies.access_inbox_by_id(request.user, inbox_id)
    activate_game_language(request, inbox.game)
    message = selectors.message_at_position(inbox, position, request.user)
    try:
        membership_services.do_hide_message(message, acting_user=request.user)
    except RuleViolation as exc:
        page = (int(position) - 1) // settings.MAFIA_MESSAGES_PER_PAGE + 1
        return _render_thread(request, inbox, form=PostMessageForm(), error=str(exc),
                              status=_STATUS.get(type(exc), 400), page=page)
    return redirect(_thread_url(inbox, position))


@login_required
@require_http_methods(["POST"])
def inbox_mark_read(request, inbox_id: str):
    """Mark the whole inbox read for the viewer ("mark all read"), an explicit action: opening a page marks
    only what it showed. Back to the thread's newest page."""
    inbox = policies.access_inbox_by_id(request.user, inbox_id)
    activate_game_language(request, inbox.game)
    latest = selectors.latest_message_time(request.user, inbox)
    if latest is not None:
        read_marks.do_mark_inbox_read(inbox, acting_user=request.user, up_to=latest)
    return redirect(f"{reverse('inbox_thread', args=[inbox.public_id])}?page=last#latest")


@login_required
@require_http_methods(["POST"])
def secret_leave(request, inbox_id: str):
    """Leave a secret inbox: it disappears for the leaver; back to "my inboxes"."""
    inbox = policies.access_inbox_by_id(request.user, inbox_id)
    activate_game_language(request, inbox.game)
    confirm = confirmation_page(
        request, title=_("Leave “%(title)s”?") % {"title": inbox.title}, game=inbox.game,
        consequence=_("The inbox disappears for you: you will no longer read it, and nobody can add you back."),
        confirm_label=_("Leave this inbox"), cancel_url=reverse("inbox_thread", args=[inbox.public_id]))
    if confirm is not None:
        return confirm
    try:
        services.do_leave_secret_inbox(inbox, acting_user=request.user)
    except RuleViolation as exc:
        return _render_thread(request, inbox, form=PostMessageForm(), error=str(exc),
                              status=_STATUS.get(type(exc), 400))
    return redirect("my_inboxes", slug=inbox.game.slug)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def secret_new(request, slug: str):
    """Create a secret inbox: any resident or staff member of the game but those its ruleset bars. A refusal is shown on the
    form with status 400 / 403 / 409; success opens the new inbox. In a game whose ruleset has no secret inboxes (no
    private channel) there is no form: the page is a 404, and a form sent anyway is refused with the service's reason
    (403), creating nothing."""
    game = game_get(slug)
    activate_game_language(request, game)
    if ruleset_of(game).opened_secret_kind() is None:
        if request.method != "POST":
            raise Http404
        try:
            services.do_create_secret_inbox(game, title=request.POST.get("title", ""), members=[],
                                            acting_user=request.user)
        except RuleViolation as exc:
            return render(request, "inboxes/secret_new.html", {"game": game, "form": None, "error": str(exc)},
                          status=_STATUS.get(type(exc), 400))
    seat = policies.seat_in(request.user, game)
    form = SecretInboxForm(request.POST or None, game=game, exclude=seat)
    status, error = 200, None
    if request.method == "POST":
        if form.is_valid():
            try:
                inbox = services.do_create_secret_inbox(game, title=form.cleaned_data["title"],
                                                        members=list(form.cleaned_data["members"]),
                                                        acting_user=request.user,
                                                        idempotency_key=form.cleaned_data["idempotency_key"] or None)
            except RuleViolation as exc:
                error, status = str(exc), _STATUS.get(type(exc), 400)
            else:
                return redirect("inbox_thread", inbox_id=inbox.public_id)
        else:
            status = 400
    return render(request, "inboxes/secret_new.html", {"game": game, "form": form, "error": error}, status=status)
