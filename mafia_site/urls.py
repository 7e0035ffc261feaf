"""URLs of Mafia Host."""
from django.contrib import admin
from django.urls import include, path, register_converter

from cities import views as city_views
from inboxes import views as inbox_views
from kernel.rulesets import registered_rulesets
from mafia_site.converters import IdConverter, PublicIdConverter
from sanctions import views as sanction_views
from staff.console import staff_admin_site

register_converter(IdConverter, "id")
register_converter(PublicIdConverter, "pid")

#: The 403 page speaks the language of the refusing game's pages, else of the account (``cities.i18n``).
handler400 = "cities.i18n.bad_request"
handler403 = "cities.i18n.permission_denied"

urlpatterns = [
    path("", city_views.home, name="home"),
    path("healthz", city_views.healthz, name="healthz"),
    path("new-game/", city_views.new_game, name="new_game"),
    # Each registered ruleset's own pages (``RulesetSpec.urls_module``): the project names no ruleset. Before the
    # shared game pages, whose patterns (``setup/<step>/``) would otherwise take a ruleset's more precise ones.
    *(path("", include(spec.urls_module)) for spec in registered_rulesets().values() if spec.urls_module),
    path("games/<slug:slug>/", city_views.game_detail, name="game_detail"),
    path("games/<slug:slug>/signup/", city_views.sign_up, name="sign_up"),
    path("games/<slug:slug>/signup/withdraw/", city_views.withdraw_signup, name="withdraw_signup"),
    path("games/<slug:slug>/inboxes/", inbox_views.my_inboxes, name="my_inboxes"),
    path("play-bans/", sanction_views.play_bans, name="play_bans"),
    path("games/<slug:slug>/inboxes/secret/new/", inbox_views.secret_new, name="secret_new"),
    path("games/<slug:slug>/posts/new/", city_views.schedule_post, name="schedule_post"),
    path("games/<slug:slug>/posts/<pid:post_id>/", city_views.post_detail, name="post_detail"),
    path("games/<slug:slug>/residents/<pid:resident_id>/", city_views.resident_detail, name="resident_detail"),
    path("inboxes/<pid:inbox_id>/", inbox_views.inbox_thread, name="inbox_thread"),
    path("inboxes/<pid:inbox_id>/n<id:position>/edit/", inbox_views.message_edit, name="message_edit"),
    path("inboxes/<pid:inbox_id>/n<id:position>/hide/", inbox_views.message_hide, name="message_hide"),
    path("inboxes/<pid:inbox_id>/live/", inbox_views.inbox_live, name="inbox_live"),
    path("games/<slug:slug>/live/unread/", inbox_views.unread_badge, name="unread_badge"),
    path("inboxes/<pid:inbox_id>/read/", inbox_views.inbox_mark_read, name="inbox_mark_read"),
    path("inboxes/<pid:inbox_id>/leave/", inbox_views.secret_leave, name="secret_leave"),
    path("", include("archive.urls")),
    path("accounts/", include("allauth.urls")),
    path("admin/", admin.site.urls),
    path("staff/", staff_admin_site.urls),
]
