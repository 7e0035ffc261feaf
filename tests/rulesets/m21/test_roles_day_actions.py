"""Day actions of roles and items through the services (RULES.md M-ROLE reporter, item cop and desperado,
M-MAFIA-2, M-ITEM-1)."""
from __future__ import annotations

import pytest

from cities.models import LifeStatus
from inboxes.models import Message
from kernel.errors import InvalidInput, NotAllowed, WrongState
from rulesets.m21 import night_services as ns
from rulesets.m21 import role_services as rs
from tests.rulesets.m21.night_helpers import end_night, mafia_post, role_pm_texts, to_night
from tests.rulesets.m21.roles_helpers import CORONER_SETUP, JAIL_SETUP, SETUP, _busted_out, give

from .day_helpers import build_game

pytestmark = pytest.mark.django_db


def thread_texts(table) -> list[str]:
    return list(Message.objects.filter(inbox=table.thread).order_by("received_at", "id").values_list("body",
                                                                                                      flat=True))


def test_the_reporters_extra_is_published_once_with_at_most_ten_words_M_ROLE():
    table = build_game(setup=SETUP)
    reporter = table.name_of_role("reporter")
    with pytest.raises(InvalidInput, match="An extra has at most 10 words; yours has 11."):
        rs.do_publish_extra(table.game, text=" ".join(["word"] * 11), acting_user=table.users[reporter],
                            now=table.tick())
    with pytest.raises(NotAllowed, match="Only the reporter publishes an extra."):
        rs.do_publish_extra(table.game, text="hello", acting_user=table.users[table.name_of_role("goon")],
                            now=table.tick())
    rs.do_publish_extra(table.game, text="The  godfather wears   a red hat", acting_user=table.users[reporter],
                        now=table.tick())
    assert thread_texts(table)[-1] == "**EXTRA, EXTRA!** The godfather wears a red hat"
    with pytest.raises(WrongState, match="You have already published your extra."):
        rs.do_publish_extra(table.game, text="again", acting_user=table.users[reporter], now=table.tick())


def test_a_gun_fired_by_day_kills_at_once_and_is_spent_M_MAFIA_2_M_ITEM_1():
    table = build_game(setup=SETUP)
    goon = table.name_of_role("goon")
    citizen = table.names_of_roles("citizen")[0]
    give(table, goon, "gun")
    assert rs.do_fire_gun(table.game, target=citizen, acting_user=table.users[goon], now=table.tick()) is True
    assert table.seat(citizen).status == LifeStatus.DEAD
    assert thread_texts(table)[-1].startswith(f"**{citizen} has died.** They were the Law-abiding citizen (Town).")
    with pytest.raises(NotAllowed, match="You hold no gun."):
        rs.do_fire_gun(table.game, target=table.name_of_role("reporter"), acting_user=table.users[goon],
                       now=table.tick())


def test_a_desperado_who_killed_a_mafioso_is_immune_to_gunshots_the_next_day_M_ROLE():
    table = build_game(setup=SETUP)
    desperado, goon = table.name_of_role("desperado"), table.name_of_role("goon")
    godfather = table.name_of_role("godfather")
    night = to_night(table)
    ns.do_submit_night_action(table.game, option="shoot", target=goon, acting_user=table.users[desperado],
                              now=table.tick())
    end_night(table, night)
    assert table.seat(goon).status == LifeStatus.DEAD
    assert "**Night 1.** You killed " + goon + ", a member of the Mafia: you are immune to gunshots today." in \
        role_pm_texts(table, desperado)
    give(table, godfather, "gun")
    assert rs.do_fire_gun(table.game, target=desperado, acting_user=table.users[godfather], now=table.tick()) is False
    assert table.seat(desperado).status == LifeStatus.ALIVE
    assert thread_texts(table)[-1] == f"A shot rang out: **{desperado}** survived it."


def test_the_item_cop_confiscates_a_found_item_the_next_day_into_the_safe_M_ROLE():
    table = build_game(setup=SETUP)
    item_cop, goon = table.name_of_role("item_cop"), table.name_of_role("goon")
    give(table, goon, "gun")
    night = to_night(table)
    ns.do_submit_night_action(table.game, option="investigate", target=goon, acting_user=table.users[item_cop],
                              now=table.tick())
    mafia_post(table, goon, f"kill {table.name_of_role('reporter')}")
    end_night(table, night)
    with pytest.raises(InvalidInput, match="You can confiscate only an item you found last night."):
        rs.do_confiscate_item(table.game, target=goon, item="whiskey", acting_user=table.users[item_cop],
                              now=table.tick())
    rs.do_confiscate_item(table.game, target=goon, item="gun", acting_user=table.users[item_cop], now=table.tick())
    assert ns.confiscated_items(table.game) == ["gun"]
    assert "The police confiscated your Gun." in role_pm_texts(table, goon)
    with pytest.raises(NotAllowed, match="You hold no gun."):
        rs.do_fire_gun(table.game, target=item_cop, acting_user=table.users[goon], now=table.tick())
    with pytest.raises(WrongState, match="You have already confiscated an item."):
        rs.do_confiscate_item(table.game, target=goon, item="gun", acting_user=table.users[item_cop],
                              now=table.tick())


def test_the_coroner_learns_the_killers_role_once_the_day_after_the_kill_M_ROLE():
    table = build_game(setup={"citizen": 2, "coroner": 1, "cop": 1, "desperado": 1, "godfather": 1, "goon": 1})
    coroner, goon = table.name_of_role("coroner"), table.name_of_role("goon")
    cop = table.name_of_role("cop")
    night = to_night(table)
    mafia_post(table, goon, f"kill {cop}")
    end_night(table, night)
    with pytest.raises(InvalidInput, match="A post mortem is done on a player who was killed, within one phase"):
        rs.do_post_mortem(table.game, target=table.names_of_roles("citizen")[0], acting_user=table.users[coroner],
                          now=table.tick())
    assert rs.do_post_mortem(table.game, target=cop, acting_user=table.users[coroner], now=table.tick()) == "goon"
    assert f"Post mortem of {cop}: they were killed by the Mafia goon." in role_pm_texts(table, coroner)
    with pytest.raises(WrongState, match="You have already conducted your post mortem."):
        rs.do_post_mortem(table.game, target=cop, acting_user=table.users[coroner], now=table.tick())


def test_a_post_mortem_covers_a_day_gun_kill_that_day_and_the_night_after_M_ROLE_coroner():
    table = build_game(setup=CORONER_SETUP)
    coroner, goon = table.name_of_role("coroner"), table.name_of_role("goon")
    victim = table.names_of_roles("citizen")[0]
    give(table, goon, "gun")
    assert rs.do_fire_gun(table.game, target=victim, acting_user=table.users[goon], now=table.tick()) is True
    assert rs.killings(table.game) == {victim: (1, "goon")}
    to_night(table, table.names_of_roles("citizen")[1])  # the day ends; night 1 is phase 2, one phase later
    assert rs.do_post_mortem(table.game, target=victim, acting_user=table.users[coroner], now=table.tick()) == "goon"
    assert f"Post mortem of {victim}: they were killed by the Mafia goon." in role_pm_texts(table, coroner)


def test_a_post_mortem_of_a_day_kill_is_refused_two_phases_later_M_ROLE_coroner():
    table = build_game(setup=CORONER_SETUP)
    coroner, goon = table.name_of_role("coroner"), table.name_of_role("goon")
    victim = table.names_of_roles("citizen")[0]
    give(table, goon, "gun")
    rs.do_fire_gun(table.game, target=victim, acting_user=table.users[goon], now=table.tick())
    night = to_night(table, table.names_of_roles("citizen")[1])
    end_night(table, night)  # day 2 is phase 3: the corpse is too decomposed
    with pytest.raises(InvalidInput, match="within one phase of the death"):
        rs.do_post_mortem(table.game, target=victim, acting_user=table.users[coroner], now=table.tick())
    assert table.seat(coroner).m21_seat.state["post_mortem_left"] == 1


def test_a_post_mortem_names_the_desperado_who_shot_himself_and_never_an_imprisonment_M_ROLE_coroner():
    table = build_game(setup=CORONER_SETUP)
    coroner, desperado = table.name_of_role("coroner"), table.name_of_role("desperado")
    cop, imprisoned = table.name_of_role("cop"), table.names_of_roles("citizen")[0]
    night = to_night(table, imprisoned)
    ns.do_submit_night_action(table.game, option="shoot", target=cop, acting_user=table.users[desperado],
                              now=table.tick())
    end_night(table, night)
    assert table.seat(desperado).status == LifeStatus.DEAD  # shooting town kills the desperado instead
    assert rs.killings(table.game) == {desperado: (2, "desperado")}
    with pytest.raises(InvalidInput, match="within one phase of the death"):
        rs.do_post_mortem(table.game, target=imprisoned, acting_user=table.users[coroner], now=table.tick())
    assert rs.do_post_mortem(table.game, target=desperado, acting_user=table.users[coroner],
                             now=table.tick()) == "desperado"


def test_a_busted_out_prisoner_sends_the_jailbreaker_at_most_twenty_words_once_M_ROLE_jailbreaker():
    table = build_game(setup=JAIL_SETUP)
    prisoner = _busted_out(table)
    jailbreaker = table.name_of_role("jailbreaker")
    user = table.users[prisoner]
    assert rs.may_send_bust_out_message(table.seat(prisoner))
    with pytest.raises(InvalidInput, match="A message to the Jailbreaker has at most 20 words; yours has 21."):
        rs.do_send_bust_out_message(table.game, text=" ".join(["w"] * 21), acting_user=user, now=table.tick())
    with pytest.raises(InvalidInput, match="Write your message to the Jailbreaker."):
        rs.do_send_bust_out_message(table.game, text="  \n ", acting_user=user, now=table.tick())
    twenty = " ".join(f"w{i}" for i in range(20))
    message = rs.do_send_bust_out_message(table.game, text=twenty.replace(" ", "  \n", 1), acting_user=user,
                                          now=table.tick())
    assert message.inbox.resident.name == jailbreaker
    assert message.body == f"**A message from {prisoner}, whom you busted out:** {twenty}"
    assert f"Your message was delivered to the Jailbreaker: {twenty}" in role_pm_texts(table, prisoner)
    assert not any(jailbreaker in text for text in role_pm_texts(table, prisoner))  # never who the Jailbreaker is
    with pytest.raises(WrongState, match="You have already sent the Jailbreaker your message."):
        rs.do_send_bust_out_message(table.game, text="again", acting_user=user, now=table.tick())
    assert not rs.may_send_bust_out_message(table.seat(prisoner))


def test_only_a_busted_out_prisoner_writes_to_the_jailbreaker_M_ROLE_jailbreaker():
    table = build_game(setup=JAIL_SETUP)
    prisoner = table.names_of_roles("citizen")[0]
    night = to_night(table, prisoner)
    end_night(table, night)  # imprisoned, never busted out
    for name in (prisoner, table.name_of_role("cop"), table.name_of_role("jailbreaker")):
        with pytest.raises(NotAllowed, match="Only a prisoner who was busted out sends the Jailbreaker a message."):
            rs.do_send_bust_out_message(table.game, text="hello", acting_user=table.users[name], now=table.tick())
    with pytest.raises(NotAllowed):
        rs.do_send_bust_out_message(table.game, text="hello", acting_user=table.host, now=table.tick())
    assert not Message.objects.filter(body__contains="whom you busted out").exists()


def test_a_busted_out_prisoner_uses_one_unused_day_action_at_once_and_then_no_more_M_ROLE_jailbreaker():
    table = build_game(setup={"citizen": 3, "reporter": 1, "cop": 1, "godfather": 1, "jailbreaker": 1})
    reporter, jailbreaker = table.name_of_role("reporter"), table.name_of_role("jailbreaker")
    night = to_night(table, reporter)
    ns.do_submit_night_action(table.game, option="bust_out", target=reporter, acting_user=table.users[jailbreaker],
                              now=table.tick())
    end_night(table, night)
    user = table.users[reporter]
    assert set(rs.day_actions_for(table.seat(reporter), table.now)) == {"extra", "bust_out_message"}
    rs.do_publish_extra(table.game, text="free at last", acting_user=user, now=table.tick())
    assert thread_texts(table)[-1] == "**EXTRA, EXTRA!** free at last"
    assert table.seat(reporter).m21_seat.state["busted_out_acted"] is True
    assert set(rs.day_actions_for(table.seat(reporter), table.now)) == {"bust_out_message"}
    rs.do_send_bust_out_message(table.game, text="thanks", acting_user=user, now=table.tick())  # still allowed
    assert rs.day_actions_for(table.seat(reporter), table.now) == {}
