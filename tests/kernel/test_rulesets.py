"""The ruleset interface and registry (kernel.rulesets, DESIGN.md "Rulesets and layers")."""
from __future__ import annotations

import pytest
from django.utils import translation

from cities.models import Game, GameEvent
from cities.services import do_create_game
from kernel.errors import InvalidInput, NotProvidedByRuleset, UnknownRuleset
from kernel.rulesets import RulesetSpec, get_ruleset, register_ruleset, registered_rulesets, ruleset_of
from rulesets.lepra.night import NIGHT_STEPS
from rulesets.lepra.ruleset import LepraRuleset


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
