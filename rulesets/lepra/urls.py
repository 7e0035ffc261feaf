"""Lepra's own pages (included by the project's URLconf through ``LepraRuleset.urls_module``): the setup's mafia
numbers, commissar offers and the draw's verification, the night page and the game's end, a city's day and the
nominations."""
from django.urls import path

from .day import views as day_views
from .night import views as night_views
from .setup import views as setup_views

urlpatterns = [
    path("games/<slug:slug>/setup/numbers/", setup_views.mafia_numbers, name="mafia_numbers"),
    path("games/<slug:slug>/offers/<pid:offer_id>/", setup_views.commissar_offer, name="commissar_offer"),
    path("games/<slug:slug>/draw/", setup_views.draw_verification, name="draw_verification"),
    path("games/<slug:slug>/night/", night_views.night_page, name="night_page"),
    path("games/<slug:slug>/end/", night_views.end_game, name="end_game"),
    path("games/<slug:slug>/cities/<id:number>/day/", day_views.city_day, name="city_day"),
    path("games/<slug:slug>/nominate/", day_views.nominate, name="nominate"),
]
