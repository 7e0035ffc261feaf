"""Inbox pages: "my inboxes" and a thread. Thin: parse, access through the policy, one service or selector."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from cities.errors import InvalidInput, NotAllowed, RuleViolation, WrongState
from cities.i18n import activate_game_language
from cities.selectors import game_get

from . import policies, selectors, services
from .forms import PostMessageForm



@login_required
def my_inboxes(request, slug: str):
    """The inboxes of a game the viewer may read, with unread counts (L-INBOX-20)."""
    game = game_get(slug)
    activate_game_language(request, game)
    inboxes = selectors.inbox_list_for(request.user, game)
    context = {
        "game": game,
        "active": [i for i in inboxes if i.is_open],
        "closed": [i for i in inboxes if not i.is_open],
    }
    return render(request, "inboxes/my_inboxes.html", context)


_STATUS = {InvalidInput: 400, NotAllowed: 403, WrongState: 409}


@require_http_methods(["GET", "HEAD", "POST"])
def inbox_thread(request, inbox_id: int):
    """One inbox: a page of messages (newest page by default) and, where the policy allows, the post form.

    A missing or unreadable inbox is one 404 (``access_inbox_by_id``). A refused post re-renders the page with
    the reason and status 400 (bad input), 403 (may read but not post, e.g. banned) or 409 (inbox closed).
    """
    inbox = policies.access_inbox_by_id(request.user, inbox_id)
    activate_game_language(request, inbox.game)
    status = 200
    error = None
    form = PostMessageForm()
    if request.method == "POST":
        if not request.user.is_authenticated:
            return redirect(f"{reverse('account_login')}?next={request.path}")
        form = PostMessageForm(request.POST)
        if form.is_valid():
            try:
                services.do_post_message(inbox, form.cleaned_data["text"], acting_user=request.user)
            except RuleViolation as exc:
                error = str(exc)
                status = _STATUS.get(type(exc), 400)
            else:
                return redirect(f"{reverse('inbox_thread', args=[inbox.pk])}#latest")
        else:
            error = "; ".join(str(e) for errs in form.errors.values() for e in errs)
            status = 400
    thread = selectors.thread_page_for(request.user, inbox, request.GET.get("page"))
    messages_on_page = list(thread.page.object_list)
    if request.user.is_authenticated and messages_on_page and request.method in ("GET", "HEAD"):
        services.do_mark_inbox_read(inbox, acting_user=request.user, up_to=messages_on_page[-1].received_at)
    now = timezone.now()
    denial = policies.post_denial_reason(request.user, inbox, now) if request.user.is_authenticated else None
    context = {
        "inbox": inbox,
        "game": inbox.game,
        "page": thread.page,
        "messages_on_page": messages_on_page,
        "members": thread.members,
        "show_hidden_text": thread.show_hidden_text,
        "form": form,
        "can_post": request.user.is_authenticated and denial is None,
        "denial": denial,
        "error": error,
    }
    return render(request, "inboxes/thread.html", context, status=status)
