"""URLs of the M21 pages."""
from django.urls import path

from . import night_views, role_views, thread_views, views

urlpatterns = [
    path("new-game/m21/", views.new_game, name="m21_new_game"),
    path("games/<slug:slug>/m21/", views.game_page, name="m21_game"),
    path("games/<slug:slug>/m21/iso/", thread_views.iso, name="m21_iso"),
    path("games/<slug:slug>/m21/activity/", thread_views.activity, name="m21_activity"),
    path("games/<slug:slug>/m21/activity/day-<int:number>/", thread_views.activity, name="m21_activity_day"),
    path("games/<slug:slug>/m21/night/", night_views.m21_night_page, name="m21_night_page"),
    path("games/<slug:slug>/m21/night/action/", night_views.submit_night_action, name="m21_night_submit"),
    path("games/<slug:slug>/m21/night/withdraw/", night_views.withdraw_night_action, name="m21_night_withdraw"),
    path("games/<slug:slug>/m21/night/stash/", night_views.assign_stash_item, name="m21_night_stash"),
    path("games/<slug:slug>/m21/extend/", views.extend, name="m21_extend"),
    path("games/<slug:slug>/m21/act/<slug:action>/", role_views.day_action, name="m21_day_action"),
    path("games/<slug:slug>/m21/spectate/", views.spectate, name="m21_spectate"),
    path("games/<slug:slug>/m21/spectate/stop/", views.stop_spectating, name="m21_stop_spectating"),
    path("games/<slug:slug>/m21/volunteer/", views.volunteer, name="m21_volunteer"),
    path("games/<slug:slug>/m21/volunteer/withdraw/", views.withdraw_volunteering, name="m21_withdraw_volunteering"),
    path("games/<slug:slug>/m21/vote-count/", views.post_vote_count, name="m21_vote_count"),
    path("games/<slug:slug>/m21/judge/close/", views.judge_close, name="m21_judge_close"),
    path("games/<slug:slug>/m21/judge/cast/", views.judge_cast, name="m21_judge_cast"),
    path("games/<slug:slug>/m21/setup/", views.setup_page, name="m21_setup"),
    path("games/<slug:slug>/m21/setup/cohost/", views.setup_cohost, name="m21_setup_cohost"),
    path("games/<slug:slug>/m21/setup/timing/", views.setup_timing, name="m21_setup_timing"),
    path("games/<slug:slug>/m21/setup/close-signups/", views.setup_close_signups, name="m21_setup_close_signups"),
    path("games/<slug:slug>/m21/setup/table/", views.setup_table, name="m21_setup_table"),
    path("games/<slug:slug>/m21/setup/draw/", views.setup_draw, name="m21_setup_draw"),
    path("games/<slug:slug>/m21/setup/deal/", views.setup_deal, name="m21_setup_deal"),
]
