"""Lepra's own pages (included by the project's URLconf through ``LepraRuleset.urls_module``): the setup's mafia
numbers, commissar offers and the draw's verification, the night page and the game's end, a city's day and the
nominations, the players' pages about the staff (impeachment, the mafia's role acknowledgement, no confidence)."""
from django.urls import path

from . import staff_views
from .day import views as day_views
from .night import views as night_views
from .setup import setup_views as setup_page_views
from .setup import views as setup_views

urlpatterns = [
    path("games/<slug:slug>/setup/", setup_page_views.game_setup, name="game_setup"),
    path("games/<slug:slug>/setup/numbers/", setup_views.mafia_numbers, name="mafia_numbers"),
    path("games/<slug:slug>/setup/<slug:step>/", setup_page_views.game_setup_step, name="game_setup_step"),
    path("games/<slug:slug>/offers/<pid:offer_id>/", setup_views.commissar_offer, name="commissar_offer"),
    path("games/<slug:slug>/draw/", setup_views.draw_verification, name="draw_verification"),
    path("games/<slug:slug>/night/", night_views.night_page, name="night_page"),
    # Each button of the night page posts to its own URL.
    path("games/<slug:slug>/night/cities/<id:number>/election/open/", night_views.open_godfather_election,
         name="open_godfather_election"),
    path("games/<slug:slug>/night/cities/<id:number>/election/vote/", night_views.vote_godfather,
         name="vote_godfather"),
    path("games/<slug:slug>/night/cities/<id:number>/election/close/", night_views.close_godfather_election,
         name="close_godfather_election"),
    path("games/<slug:slug>/night/cities/<id:number>/godfather/", night_views.appoint_godfather,
         name="appoint_godfather"),
    path("games/<slug:slug>/night/cities/<id:number>/kill/", night_views.decide_kill, name="decide_kill"),
    path("games/<slug:slug>/night/cities/<id:number>/touring/", night_views.decide_touring, name="decide_touring"),
    path("games/<slug:slug>/night/check/", night_views.check_resident, name="check_resident"),
    path("games/<slug:slug>/night/gift/", night_views.send_gift, name="send_gift"),
    path("games/<slug:slug>/end/", night_views.end_game, name="end_game"),
    path("games/<slug:slug>/cities/<id:number>/day/", day_views.city_day, name="city_day"),
    # Each button of the city day page posts to its own URL.
    path("games/<slug:slug>/cities/<id:number>/day/voting/schedule/", day_views.schedule_voting,
         name="schedule_voting"),
    path("games/<slug:slug>/cities/<id:number>/day/voting/open/", day_views.open_voting, name="open_voting"),
    path("games/<slug:slug>/cities/<id:number>/day/voting/extend/", day_views.extend_voting, name="extend_voting"),
    path("games/<slug:slug>/cities/<id:number>/day/voting/close/", day_views.close_voting, name="close_voting"),
    path("games/<slug:slug>/cities/<id:number>/day/suicides/confirm/", day_views.confirm_suicide,
         name="confirm_suicide"),
    path("games/<slug:slug>/cities/<id:number>/day/proxies/accept/", day_views.accept_proxy, name="accept_proxy"),
    path("games/<slug:slug>/cities/<id:number>/day/decide/", day_views.decide_execution, name="decide_execution"),
    path("games/<slug:slug>/cities/<id:number>/day/court/put/", day_views.put_before_court, name="put_before_court"),
    path("games/<slug:slug>/cities/<id:number>/day/court/close/", day_views.close_court_case, name="close_court_case"),
    path("games/<slug:slug>/cities/<id:number>/day/court/vote/", day_views.court_vote, name="court_vote"),
    path("games/<slug:slug>/cities/<id:number>/day/judge/propose/", day_views.propose_candidate,
         name="propose_candidate"),
    path("games/<slug:slug>/cities/<id:number>/day/judge/removal/open/", day_views.open_removal_demand,
         name="open_removal_demand"),
    path("games/<slug:slug>/cities/<id:number>/day/judge/removal/confirm/", day_views.confirm_removal_demand,
         name="confirm_removal_demand"),
    path("games/<slug:slug>/cities/<id:number>/day/judge/recuse/", day_views.recuse_judge, name="recuse_judge"),
    path("games/<slug:slug>/impeachment/", staff_views.impeachment, name="impeachment"),
    path("games/<slug:slug>/mafia-role/", staff_views.mafia_role, name="mafia_role"),
    path("games/<slug:slug>/no-confidence/", staff_views.no_confidence, name="no_confidence"),
    path("games/<slug:slug>/no-confidence/arbiter/", staff_views.complain_about_arbiter,
         name="no_confidence_arbiter"),
    path("games/<slug:slug>/no-confidence/consigliere/", staff_views.complain_about_consigliere,
         name="no_confidence_consigliere"),
    path("games/<slug:slug>/nominate/", day_views.nominate, name="nominate"),
    # Each button of the nomination page posts to its own URL.
    path("games/<slug:slug>/nominate/resident/", day_views.nominate_resident, name="nominate_resident"),
    path("games/<slug:slug>/nominate/proxy/", day_views.request_proxy, name="request_proxy"),
    path("games/<slug:slug>/nominate/confrontation/", day_views.request_confrontation,
         name="request_confrontation"),
    path("games/<slug:slug>/nominate/last-word/", day_views.request_last_word, name="request_last_word"),
    path("games/<slug:slug>/nominate/suicide/", day_views.declare_suicide, name="declare_suicide"),
]
