"""The stack's floor: a minimal Django view that inserts one row and redirects, and the page it redirects to.
Routed only by ``bench.urls`` (``mafia_site.settings.bench``), never by the production URLs. Both go through the
same middleware as every page (sessions, authentication, CSRF, locale), so the ratio to them is what Mafia Host
adds to the stack."""
from django.http import HttpResponse
from django.shortcuts import redirect
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from .models import FloorRow


@require_http_methods(["POST"])
def floor_post(request):
    """Insert one row (the posted ``text``) and redirect to the floor page: one INSERT, one 302."""
    FloorRow.objects.create(text=request.POST.get("text", "")[:200], at=timezone.now())
    return redirect("bench_floor_page")


def floor_page(request):
    """The floor's redirect target: a small page for the logged-in user, no query of its own."""
    return HttpResponse(f"floor for {request.user.pk}", content_type="text/plain")
