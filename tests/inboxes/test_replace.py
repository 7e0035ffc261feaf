"""Replacements (issue 3 item 7, L-REPLACE-1): the Procurator gives a seat to a new user; the seat keeps everything,
the old user loses every non-public inbox at once, posts keep the name of who wrote them."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.utils.translation import override

from cities.models import GameEvent, Resident
from inboxes import membership_services, policies, posting
from inboxes.models import Inbox, Membership, Message
from rulesets.lepra.kinds import LepraInboxKind
from kernel.errors import InvalidInput, NotAllowed
from tests.conftest import fresh


def newcomer(name: str = "Smenshik"):
    return get_user_model().objects.create_user(name.lower(), f"{name.lower()}@example.com", "x-secret-123",
                                                display_name=name)


def test_the_replaced_user_gets_404_on_every_inbox_they_read_before_and_the_new_user_takes_the_seat_L_REPLACE_1(demo, client):
    seat = demo.seat("mafioso")
    old_name = seat.name
    readable = list(policies.readable_inboxes(fresh(demo.mafioso), demo.game).values_list("public_id", flat=True))
    assert len(readable) >= 3  # city, personal, mafia
    memberships = sorted(Membership.objects.filter(resident=seat).values_list("inbox_id", "state"))
    old_posts = list(Message.objects.filter(author_resident=seat).values_list("pk", "author_name"))
    assert old_posts and {n for _pk, n in old_posts} == {old_name}
    new_user = newcomer()
    membership_services.do_replace_player(seat, new_user, acting_user=fresh(demo.procurator))
    seat.refresh_from_db()
    assert (seat.user, seat.name) == (new_user, "Smenshik")
    assert sorted(Membership.objects.filter(resident=seat).values_list("inbox_id", "state")) == memberships
    client.force_login(demo.mafioso)
    assert [client.get(f"/inboxes/{pk}/").status_code for pk in readable] == [404] * len(readable)
    assert policies.readable_inboxes(fresh(demo.mafioso), demo.game).count() == 0
    client.force_login(new_user)
    assert [client.get(f"/inboxes/{pk}/").status_code for pk in readable] == [200] * len(readable)
    # Posts keep the name of who wrote them; new posts carry the new name.
    assert list(Message.objects.filter(author_resident=seat, pk__in=[p for p, _n in old_posts])
                .values_list("pk", "author_name")) == old_posts
    city = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city=seat.city, rolled_over_at__isnull=True)
    message = posting.do_post_message(city, "Я на замене.", acting_user=fresh(new_user))
    assert (message.author_resident, message.author_name, message.author_user) == (seat, "Smenshik", new_user)
    event = GameEvent.objects.filter(kind="resident.replaced").latest("id")
    assert event.payload == {"resident": seat.pk, "old_user": demo.mafioso.pk, "new_user": new_user.pk,
                             "old_name": old_name, "new_name": "Smenshik"}


@pytest.mark.parametrize("case, error_class, text", [
    ("not procurator", NotAllowed, "Only the Procurator of this game may replace a player."),
    ("holds a seat", InvalidInput, "{name} already has a seat in this game."),
    ("staff", NotAllowed, "Staff of a game cannot be its residents."),
])
def test_replacement_refusals_change_nothing_L_REPLACE_1(demo, case, error_class, text):
    seat = demo.seat("honest")
    actor, new_user = fresh(demo.procurator), newcomer()
    if case == "not procurator":
        actor = fresh(demo.tribune1)
    elif case == "holds a seat":
        new_user = demo.resident2
    elif case == "staff":
        new_user = demo.arbiter
    with override("en"), pytest.raises(error_class) as exc:
        membership_services.do_replace_player(seat, new_user, acting_user=actor)
    assert str(exc.value) == text.format(name=new_user.public_name)
    assert Resident.objects.get(pk=seat.pk).user == demo.honest
