"""The lively demo of ``make run`` (issue 9 point 3): a game played through the services and the clock up to the
morning of day 2, with activity in every kind of inbox (L-DAY-5, L-JUDGE-2..5, L-NIGHT-3, L-POST-2, L-NOM,
L-DAY-3, L-INBOX-13, L-INBOX-19)."""
import random
from datetime import timedelta

import pytest
from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model
from django.db.models import F, Value
from django.db.models.functions import Concat

from cities.models import Game, GameDay, GameStatus, LifeStatus, PostKind, PublicPost, Resident, ScheduledEvent
from inboxes.models import Inbox, Membership, Message
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra.models import GodfatherElection
from rulesets.lepra import seats
from rulesets.lepra.demo import DEMO_SLUG, load_demo_game
from tests.conftest import DEMO_NOW, DEMO_SEED
from rulesets.lepra.models import ElectionBallot, JudgeElection, Nomination, ProxyRequest, VotingSession


@pytest.fixture(scope="module")
def lively(django_db_blocker, django_db_setup):
    """The lively demo, loaded once for this module beside the suite's demo (whose slug and logins are moved aside
    inside a transaction rolled back at the end)."""
    from django.db import transaction

    with django_db_blocker.unblock(), transaction.atomic():
        Game.objects.filter(slug=DEMO_SLUG).update(slug="quiet-demo")
        get_user_model().objects.update(username=Concat(Value("q-"), F("username")),
                                        email=Concat(Value("q-"), F("email")),
                                        display_name_key=Concat(Value("q-"), F("display_name_key")))
        EmailAddress.objects.update(email=Concat(Value("q-"), F("email")))
        demo = load_demo_game(rng=random.Random(DEMO_SEED), now=DEMO_NOW, lively=True)
        yield demo
        transaction.set_rollback(True)


pytestmark = pytest.mark.django_db


def test_day_one_elected_a_judge_per_city_by_ballots_and_formed_the_court_L_JUDGE_5_L_DAY_5(lively):
    game = Game.objects.get(pk=lively.game.pk)
    assert (game.status, game.day_number) == (GameStatus.RUNNING, 2)
    judges = set()
    for election in JudgeElection.objects.filter(game=game).select_related("city"):
        judge = Resident.objects.get(seats.rank_q("is_judge"), city=election.city)
        assert election.day == 1 and election.closed_at is not None and election.winner_id == judge.pk
        ballots = ElectionBallot.objects.filter(inbox__precinct__election=election)
        assert ballots.filter(pro=True).exists() and ballots.filter(pro=False).exists()
        judges.add(judge.pk)
    assert len(judges) == 3
    court = Inbox.objects.get(game=game, kind=LepraInboxKind.COURT, rolled_over_at__isnull=True)
    assert set(Membership.objects.filter(inbox=court).values_list("resident_id", flat=True)) == judges


def test_night_one_elected_the_godfathers_L_NIGHT_3(lively):
    elections = list(GodfatherElection.objects.filter(game=lively.game))
    assert len(elections) == 3
    for election in elections:
        godfather = Resident.objects.get(seats.rank_q("is_godfather"), city=election.city)
        assert (election.night, election.winner_id) == (1, godfather.pk)


def test_the_clock_runs_the_daily_post_is_published_and_tonight_is_planned_L_POST_2_L_DAY_1(lively):
    game = lively.game
    day2 = GameDay.objects.get(game=game, number=2)
    assert day2.started_at == day2.starts_at == DEMO_NOW - timedelta(hours=3)
    post = PublicPost.objects.get(game=game, kind=PostKind.DAILY)
    assert post.published_at == day2.starts_at
    for judge in Resident.objects.filter(seats.rank_q("is_judge"), game=game):
        assert judge.name in post.body
    pending = sorted(ScheduledEvent.objects.filter(game=game, done_at__isnull=True, cancelled_at__isnull=True)
                     .values_list("kind", flat=True))
    assert pending == sorted(["publish_post", "voting_open", "voting_open", "voting_open", "voting_close",
                              "voting_close", "voting_close", "night_start", "night_end", "daily_post_draft",
                              "day_start"])
    assert not Resident.objects.filter(game=game).exclude(status=LifeStatus.ALIVE).exists()


def test_day_two_has_nominations_a_proxy_and_the_evening_voting_L_NOM_1_L_NOM_6_L_DAY_3(lively):
    game = lively.game
    for city in game.cities.all():
        assert Nomination.objects.filter(city=city, day=2).count() == 2
        assert ProxyRequest.objects.filter(city=city, day=2, accepted_at__isnull=False).count() == 1
        session = VotingSession.objects.get(city=city, day=2)
        assert (session.opens_at, session.closes_at) == (DEMO_NOW + timedelta(hours=8), DEMO_NOW + timedelta(hours=12))


def test_every_kind_of_inbox_but_the_check_channel_has_posts_and_none_is_from_the_future(lively):
    game = lively.game
    kinds = set(Message.objects.filter(inbox__game=game).values_list("inbox__kind", flat=True))
    assert kinds == {LepraInboxKind.CITY, LepraInboxKind.MAFIA, LepraInboxKind.PERSONAL, LepraInboxKind.POLICE, LepraInboxKind.COURT,
                     LepraInboxKind.CEMETERY, LepraInboxKind.OFFICE, LepraInboxKind.BAR, LepraInboxKind.SECRET, LepraInboxKind.STAGE,
                     LepraInboxKind.PRECINCT, LepraInboxKind.NOTARY}
    assert not Message.objects.filter(inbox__game=game, received_at__gt=DEMO_NOW).exists()
    assert not Message.objects.filter(inbox__game=game, inbox__kind=LepraInboxKind.CHECK).exists()

