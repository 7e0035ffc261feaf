"""A second step for irreversible actions: a page that says what will happen and asks again (works without JS).

Views call ``confirmation_page`` first thing when handling an irreversible POST; it returns None once the POST
carries the confirmation, else the page, which re-posts the very same fields plus the confirmation to the same
URL: each action has its own URL, so no field says which action runs. The staff console's actions use the same
page (``staff.console.confirm_action``): their selection is posted to the action's own URL (``post_to``), without
the fields of the changelist's action menu (``omit``).
"""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

#: The POST field that confirms an irreversible action.
CONFIRM_FIELD = "confirmed"
_NOT_REPOSTED = {CONFIRM_FIELD, "csrfmiddlewaretoken"}


def is_confirmed(request: HttpRequest) -> bool:
    """Whether this POST carries the confirmation of the second step."""
    return request.method == "POST" and request.POST.get(CONFIRM_FIELD) == "yes"


def confirmation_page(request: HttpRequest, *, title: str, consequence: str, confirm_label: str,
                      cancel_url: str, game=None, undo: str = "", post_to: str | None = None,
                      omit: frozenset[str] = frozenset()) -> HttpResponse | None:
    """None when ``request`` is a confirmed POST; otherwise the confirmation page (status 200): ``title``, the
    ``consequence`` in plain words, a button ``confirm_label`` that re-posts the same fields (but those named in
    ``omit``) with the confirmation to ``post_to`` (the same URL by default), and a link back to ``cancel_url``.
    ``game`` (optional) gives the page its game's navigation. ``undo`` says how the action is undone, for one
    that can be (the page then does not say "This cannot be undone."). Texts are already translated by the
    caller."""
    if is_confirmed(request):
        return None
    # The fields as the browser sent them (the staff console reads an action's selection into database ids,
    # keeping what was posted in ``posted_as_sent``): the confirmation posts back the same opaque keys.
    posted = getattr(request, "posted_as_sent", request.POST)
    fields = [(name, value) for name, values in posted.lists() if name not in _NOT_REPOSTED | omit
              for value in values]
    context = {"title": title, "consequence": consequence, "confirm_label": confirm_label,
               "cancel_url": cancel_url, "fields": fields, "confirm_field": CONFIRM_FIELD, "game": game,
               "undo": undo, "post_to": post_to or request.get_full_path()}
    return render(request, "confirm.html", context)
