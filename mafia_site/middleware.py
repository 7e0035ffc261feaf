"""Project middleware."""
from __future__ import annotations

import logging

from django.http import HttpResponse
from django.template.loader import render_to_string
from django.utils.cache import patch_cache_control

from cities.i18n import activate_account_language
from kernel.busy import DatabaseBusy, busy_page_message, is_database_busy, retry_after_seconds
from kernel.live import NothingNew, empty_answer, nothing_new
from kernel.errors import InvalidInput, NotAllowed, RuleViolation, WrongState

logger = logging.getLogger(__name__)


class LivePollMiddleware:
    """Answer a live poll that finds nothing new with an empty 204 from the shared cache, before the rest of the
    stack runs (``kernel.live.nothing_new``); every other request, and a poll whose token no longer stands, goes
    on to the full view, which decides by the access policy. A full view's "nothing new" (``NothingNew``) leaves
    as the very same answer (``kernel.live.empty_answer``: nothing the other middleware added), so that no reader
    can tell which path answered. First of all middleware: it reads the session (the token is bound to its user)
    from the cache itself, with the token's record."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        early = nothing_new(request)
        if early is not None:
            return early
        response = self.get_response(request)
        return empty_answer() if isinstance(response, NothingNew) else response


class PrivateCacheMiddleware:
    """Mark every response to a logged-in user ``Cache-Control: private`` (DESIGN.md "The access policy").

    A page rendered for one viewer may hold what only that viewer may read; no shared cache may keep it.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            patch_cache_control(response, private=True, no_cache=True)
        return response


class ContentSecurityPolicyMiddleware:
    """Send ``settings.MAFIA_CONTENT_SECURITY_POLICY`` as the Content-Security-Policy header on the site's
    pages (not the Django admin, whose templates are not ours). Our pages load nothing from other origins and
    run no inline script, so a message that slipped past the sanitiser still could not run code or call home."""

    def __init__(self, get_response):
        from django.conf import settings

        self.get_response = get_response
        self.policy = settings.MAFIA_CONTENT_SECURITY_POLICY

    def __call__(self, request):
        response = self.get_response(request)
        if self.policy and not request.path.startswith("/admin/"):
            policy = self.policy
            if request.path.startswith("/staff/"):
                # The staff console renders Django's admin templates, which carry inline style attributes.
                policy = policy.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")
            response.setdefault("Content-Security-Policy", policy)
        return response


class RejectNullBytesMiddleware:
    """Answer 400 "Null characters are not allowed." to a request with a NUL byte in its path, query string or
    form data, before any view parses it.

    No input of the site may hold a NUL (PostgreSQL text cannot store one, and no name, id or message needs one);
    refusing it here, once, covers every URL and every field, those parsed by hand included, instead of letting
    a query or a search fail deeper with a 500. Only form-encoded bodies are read (a JSON or file body is left to
    its view); the check reads ``request.POST``, which Django parses once and caches for the view.
    """

    FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if self._has_nul(request):
            from django.http import HttpResponseBadRequest
            from django.utils.html import format_html
            from django.utils.translation import gettext as _

            activate_account_language(request)  # the language of the viewer's games, as their pages speak
            reason = _("Null characters are not allowed.")
            if request.method == "POST" and request.headers.get("HX-Request") == "true":
                # The only htmx form is the thread's post form: its refusals come as a 200 with the reason for its
                # feedback area and the X-Post-Refused status (the page keeps the typed text).
                fragment = format_html('<p class="error post-error" role="alert" id="post-error">{}</p>', reason)
                return HttpResponse(fragment, headers={"X-Post-Refused": "400"})
            return HttpResponseBadRequest(render_to_string("400.html", {"reason": reason}, request=request))
        return self.get_response(request)

    def _has_nul(self, request) -> bool:
        if "\x00" in request.path or "%00" in request.META.get("QUERY_STRING", ""):
            return True
        if any("\x00" in key or any("\x00" in v for v in values) for key, values in request.GET.lists()):
            return True
        if request.method == "POST" and request.content_type in self.FORM_TYPES:
            from django.core.exceptions import BadRequest, RequestDataTooBig, SuspiciousOperation
            from django.http.multipartparser import MultiPartParserError

            try:
                post = request.POST
            except RequestDataTooBig:
                # Over DATA_UPLOAD_MAX_MEMORY_SIZE: a multipart body is then half read, and a second read would find
                # a truncated form (an "empty message"). Refused now: Django answers 400 (handler400) with the reason.
                raise
            except (BadRequest, MultiPartParserError, SuspiciousOperation, UnicodeDecodeError):
                return False  # a malformed body: Django answers 400 when the view reads it
            return any("\x00" in key or any(isinstance(v, str) and "\x00" in v for v in values)
                       for key, values in post.lists())
        return False


class RuleViolationMiddleware:
    """Answer a ``RuleViolation`` that leaves a view (``NotProvidedByRuleset`` among them: a tool or page of
    another ruleset's rules) with its message as a refusal, never a 500: 400 for ``InvalidInput``, 403 for
    ``NotAllowed``, 409 for ``WrongState``, 400 otherwise. The page is standalone, like the 400 page. Views that
    answer a refusal in their own page catch the error themselves; this is the floor under every other view."""

    STATUS = ((InvalidInput, 400), (NotAllowed, 403), (WrongState, 409))

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        """The refusal page of ``exception`` when it is a ``RuleViolation``; None (Django's handling) otherwise."""
        if not isinstance(exception, RuleViolation):
            return None
        status = next((code for kind, code in self.STATUS if isinstance(exception, kind)), 400)
        return HttpResponse(render_to_string("refused.html", {"reason": str(exception)}, request=request),
                            status=status)


class DatabaseBusyMiddleware:
    """Answer a request whose database work ran out of time (``kernel.busy.is_database_busy``: a lock not obtained
    within ``DATABASE_LOCK_TIMEOUT_MS``, a statement cancelled by its timeout) with "busy, try again": status 503
    with ``Retry-After``, never a 500 nor a web worker held until the statement timeout. Nothing of the request was
    stored (its transaction rolled back). An htmx post gets its refusal as the post form's feedback, as the
    thread's post form does (200, ``X-Post-Refused: 503``), so that the typed text stays; a plain form's page says
    so, and the browser's Back keeps what was typed. Views that keep the text themselves (the thread's post form)
    catch the error first; this is the floor under every other view."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        """The busy page when ``exception`` is a busy database; None (Django's handling) otherwise."""
        if not is_database_busy(exception):
            return None
        logger.warning("busy database, %s %s answered 503: %s", request.method, request.path,
                       str(exception).strip().splitlines()[0] if str(exception) else "")
        activate_account_language(request)
        headers = {"Retry-After": str(retry_after_seconds())}
        if request.method == "POST" and request.headers.get("HX-Request") == "true":
            return HttpResponse(render_to_string("inboxes/_post_error.html", {"error": str(DatabaseBusy())},
                                                 request=request), headers={**headers, "X-Post-Refused": "503"})
        return HttpResponse(render_to_string("busy.html", {"reason": busy_page_message()}, request=request),
                            status=503, headers=headers)
