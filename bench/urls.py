"""URLs of the bench server: every URL of Mafia Host, plus the floor (``mafia_site.settings.bench`` only)."""
from django.urls import path

from mafia_site.urls import urlpatterns as site_urlpatterns

from . import views

urlpatterns = [
    path("bench/floor/", views.floor_post, name="bench_floor_post"),
    path("bench/floor/page/", views.floor_page, name="bench_floor_page"),
    *site_urlpatterns,
]
