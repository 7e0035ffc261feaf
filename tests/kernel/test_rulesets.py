"""The ruleset interface and registry (kernel.rulesets, DESIGN.md "Rulesets and layers")."""
from __future__ import annotations

import pytest
from django.utils import translation

from cities.models import Game, GameEvent
from cities.services import do_create_game
from kernel.errors import InvalidInput, NotProvidedByRuleset, UnknownRuleset
from kernel.rulesets import RulesetSpec, get_ruleset, register_ruleset, registered_rulesets, ruleset_of
from rulesets.lepra.clock.daily_post import daily_post_record
from rulesets.lepra.night import NIGHT_STEPS
from rulesets.lepra.ruleset import LepraRuleset
from rulesets.m21.night_data import M21Death, Seat
from rulesets.m21.night_pages import MorningPost, morning_deaths_section, morning_herald_section, morning_post_text
from tests.conftest import DEMO_NOW


def test_lepra_is_registered_by_its_app_with_its_night_and_language_L_DAY_5():
    spec = get_ruleset("lepra")
    assert isinstance(spec, LepraRuleset)
    assert registered_rulesets()["lepra"] is spec
    assert spec.language == "ru" and spec.default_time_zone == "Europe/Moscow"
    assert tuple(spec.night_steps) == NIGHT_STEPS
    assert [s.key for s in spec.night_steps] == ["first_night_quiet", "mafia_kill", "touring", "commissar_checks",
                                                  "deaths", "spirit_rule"]
    assert spec.first_action_night == 2


def test_an_unregistered_key_is_a_domain_error():
    with translation.override("en"), pytest.raises(UnknownRuleset) as error:
        get_ruleset("poker")
    assert isinstance(error.value, InvalidInput)
    assert str(error.value) == "Unknown ruleset: poker."
    with pytest.raises(UnknownRuleset):
        ruleset_of(Game(ruleset="poker"))


def test_registering_is_idempotent_for_a_class_and_refused_for_another():
    assert register_ruleset(LepraRuleset()) is get_ruleset("lepra")

    class Impostor(RulesetSpec):
        key = "lepra"

    with pytest.raises(ValueError, match="already registered"):
        register_ruleset(Impostor())
    with pytest.raises(ValueError, match="no key"):
        register_ruleset(RulesetSpec())
    assert isinstance(get_ruleset("lepra"), LepraRuleset)


def test_a_part_a_ruleset_does_not_provide_raises_a_clear_error():
    class Bare(RulesetSpec):
        key = "bare"

    spec = Bare()
    translation.activate("en")
    with pytest.raises(NotProvidedByRuleset, match="The bare ruleset does not provide a victory check."):
        spec.check_victory(None)
    with pytest.raises(NotProvidedByRuleset, match="a night state builder"):
        spec.night_state(None, 2)
    with pytest.raises(NotProvidedByRuleset, match="an outcome applier"):
        spec.apply_night_outcome(None, None, night=2, now=None)
    with pytest.raises(NotProvidedByRuleset, match="standing inboxes"):
        spec.create_standing_inboxes(None, now=None)
    with pytest.raises(NotProvidedByRuleset, match="a daily post"):
        spec.daily_post_text(None, 2, None)
    assert "bare" not in registered_rulesets()


@pytest.mark.django_db
def test_game_creation_refuses_an_unregistered_ruleset_and_creates_nothing(django_user_model):
    user = django_user_model.objects.create_user("proc", password="x")
    before = (Game.objects.count(), GameEvent.objects.count())
    with translation.override("en"), pytest.raises(UnknownRuleset, match="Unknown ruleset: poker."):
        do_create_game(title="Cards", slug="cards", ruleset="poker", acting_user=user)
    assert (Game.objects.count(), GameEvent.objects.count()) == before
    assert not Game.objects.filter(slug="cards").exists()


@pytest.mark.django_db
def test_a_lepra_game_takes_its_defaults_from_the_spec_L_DAY_1(django_user_model):
    user = django_user_model.objects.create_user("proc", password="x")
    game = do_create_game(title="Lepra", slug="lepra-1", acting_user=user)
    assert ruleset_of(game) is get_ruleset("lepra")
    assert (game.time_zone, game.day_start.isoformat(), game.language) == ("Europe/Moscow", "10:00:00", "ru")


def test_each_rulesets_morning_post_names_its_sections_in_order_L_POST_2_M_NIGHT_4():
    assert get_ruleset("lepra").daily_post_sections == ("night", "results", "other_deaths", "judges", "score",
                                                        "game_over")
    assert get_ruleset("m21").daily_post_sections == ("deaths", "herald")


def test_the_lepra_daily_post_is_composed_from_the_sections_the_spec_declares_L_POST_2(demo, monkeypatch):
    """``rulesets.lepra.clock.daily_post.daily_post_record`` goes through ``ruleset_of(game).daily_post_text``: the body is the
    non-empty sections in the spec's order, and a spec that declares fewer or reordered sections changes it."""
    spec = ruleset_of(demo.game)
    original = type(spec).daily_post_section
    asked = []

    def spy(self, game, day, key, context):
        text = original(self, game, day, key, context)
        asked.append((key, text))
        return text

    monkeypatch.setattr(type(spec), "daily_post_section", spy)
    full = daily_post_record(demo.game, 2, DEMO_NOW).body
    sections = dict(asked)
    assert [key for key, _text in asked] == list(spec.daily_post_sections)
    assert full == "\n".join(text for _key, text in asked if text).strip()
    assert sections["night"].startswith("## Ночь 1") and sections["game_over"] == ""
    monkeypatch.setattr(type(spec), "daily_post_sections", ("score", "judges"))
    assert daily_post_record(demo.game, 2, DEMO_NOW).body == (sections["score"] + "\n" + sections["judges"]).strip()


def test_the_m21_morning_post_is_composed_from_the_sections_the_spec_declares_M_NIGHT_4(monkeypatch):
    seats = {"Ann": Seat("Ann", "cop", sane=False), "Bob": Seat("Bob", "goon")}
    post = MorningPost(2, [M21Death("Ann", "mafia", "Bob")], seats, ["Extra!"])
    deaths, herald = morning_deaths_section(post), morning_herald_section(post)
    assert herald == "\n### The Metrodipolis Herald\n\n- Extra!"
    assert morning_post_text(2, post.deaths, seats, post.headlines) == deaths + "\n" + herald
    assert morning_post_text(2, post.deaths, seats, []) == deaths
    monkeypatch.setattr(type(get_ruleset("m21")), "daily_post_sections", ("herald", "deaths"))
    assert morning_post_text(2, post.deaths, seats, post.headlines) == herald + "\n" + deaths
