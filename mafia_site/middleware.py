"""Project middleware."""
from __future__ import annotations

from django.utils.cache import patch_cache_control


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
