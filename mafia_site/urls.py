"""URLs of Mafia Host."""
from django.contrib import admin
from django.urls import include, path

from cities import views as city_views
from cities.staff_admin import staff_admin_site
from inboxes import views as inbox_views

urlpatterns = [
    path("", city_views.home, name="home"),
    path("healthz", city_views.healthz, name="healthz"),
    path("games/<slug:slug>/", city_views.game_detail, name="game_detail"),
    path("games/<slug:slug>/inboxes/", inbox_views.my_inboxes, name="my_inboxes"),
    path("games/<slug:slug>/posts/new/", city_views.schedule_post, name="schedule_post"),
    path("games/<slug:slug>/posts/<int:post_id>/", city_views.post_detail, name="post_detail"),
    path("games/<slug:slug>/residents/<int:resident_id>/", city_views.resident_detail, name="resident_detail"),
    path("inboxes/<str:inbox_id>/", inbox_views.inbox_thread, name="inbox_thread"),
    path("accounts/", include("allauth.urls")),
    path("admin/", admin.site.urls),
    path("staff/", staff_admin_site.urls),
]
