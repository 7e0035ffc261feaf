"""URLs of the archive and of notifications."""
from django.urls import path

from . import views

urlpatterns = [
    path("me/consents/", views.my_consents, name="archive_consents"),
    path("me/consents/give/", views.give_consent, name="archive_give_consent"),
    path("me/consents/revoke/", views.revoke_consent, name="archive_revoke_consent"),
    path("me/mentions/", views.mentions, name="archive_mentions"),
    path("me/notifications/", views.notification_list, name="archive_notifications"),
    path("me/notifications/settings/", views.notification_settings, name="archive_notification_settings"),
    path("games/<slug:slug>/archive/", views.archive_game, name="archive_game"),
    path("games/<slug:slug>/archive/open/<pid:inbox_id>/", views.open_inbox, name="archive_open_inbox"),
    path("games/<slug:slug>/archive/timeline/", views.timeline, name="archive_timeline"),
    path("games/<slug:slug>/archive/search/", views.search, name="archive_search"),
    path("games/<slug:slug>/archive/votes/", views.votes, name="archive_votes"),
    path("games/<slug:slug>/archive/map/", views.game_map, name="archive_map"),
    path("games/<slug:slug>/archive/export.json", views.export_json, name="archive_export_json"),
    path("games/<slug:slug>/archive/print/", views.export_print, name="archive_export_print"),
]
