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
