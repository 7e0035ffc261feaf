"""One name per seat after a replacement (L-REPLACE-1, forum practice): the seat's current name everywhere, shown
as "New (replacing Old)" where history needs both: the vote count of the day, the receipts and the posts the old
player wrote, the final count posted at the end of the day and the host's must-vote list (M-VOTE-5, in words)."""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from rulesets.m21 import selectors, services
from rulesets.m21.console_selectors import last_offenders
from tests.rulesets.m21.day_helpers import build_game, make_user


def _replace_grace():
    table = build_game()
    old_post = table.post("Grace", "I am Grace. ##VOTE Alice")
    table.post("Alice", "##VOTE Grace")
    table.tick(1)
    zed = make_user("Zed")
    services.do_replace_m21_player(table.seat("Grace"), zed, acting_user=table.host, now=table.now)
    table.users["Zed"] = zed
    return table, old_post


@pytest.mark.django_db
def test_the_live_count_names_a_replaced_seat_new_replacing_old_L_REPLACE_1():
    table, _ = _replace_grace()
    table.post("Bob", "##VOTE Zed")
    view = selectors.day_view(table.host, table.game, table.now)
    rows = {row["target"]: row["voters"] for row in view.count_rows}
    assert rows == {"Zed (replacing Grace)": ["Alice", "Bob"], "Alice": ["Zed (replacing Grace)"]}
    assert "Grace" not in " ".join(view.not_voting)


@pytest.mark.django_db
def test_posts_and_receipts_of_the_old_player_name_the_seat_new_replacing_old_L_REPLACE_1():
    table, _ = _replace_grace()
    client = Client()
    client.force_login(table.users["Carol"])
    html = client.get(reverse("inbox_thread", args=[table.thread.public_id])).content.decode()
    assert ">Zed (replacing Grace)</a>" in html  # the old post's author
    assert "Alice votes Zed (replacing Grace)." in html  # Alice's receipt
    assert "Zed (replacing Grace) votes Alice." in html  # the old player's own receipt
    assert ">Grace</a>" not in html


@pytest.mark.django_db
def test_the_final_count_and_the_must_vote_list_use_the_current_name_in_words_M_VOTE_5():
    table, _ = _replace_grace()
    for name in ("Bob", "Carol", "Dave"):
        table.post(name, "##VOTE Alice\n##END")
    table.post("Zed", "##END")
    table.post("Erin", "##VOTE Alice\n##END")
    day = table.day(1)
    assert day.status == "decided" and day.imprisoned.name == "Alice"
    final = table.thread.messages.get(body__startswith="**Day 1 is over:**").body
    assert "Zed (replacing Grace) (END)" in final
    number, offenders = last_offenders(table.game)
    by_seat = {o["seat"]: o["offences"] for o in offenders}
    assert number == 1
    assert by_seat["Frank"] == ["no vote in place at the end", "never voted", "fewer than two posts"]
    assert "Grace" not in by_seat and "Zed (replacing Grace)" not in by_seat  # voted and posted twice
