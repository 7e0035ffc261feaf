"""The mafia draw as the site runs it (L-ASSIGN-1..4) and its verification after the game (L-ASSIGN-3): the
commitment is public before the numbers, the page and ``manage.py verify_draw`` recompute it, and any change of
one list entry or the salt fails both; before the game ends the page is a 404 for everyone."""
from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone
from django.utils.translation import override

from cities.models import Alignment, City, GameEvent, GameStatus, PostKind, PublicPost, Resident
from cities.services import do_set_game_status
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from kernel.errors import InvalidInput, NotAllowed, WrongState
from roles import draw
from rulesets.lepra.models import MafiaDraw
from rulesets.lepra.setup import services as role_services
from tests.setup_factory import build_game


def _finish(built):
    do_set_game_status(built.game, GameStatus.FINISHED, acting_user=built.procurator)
    built.refresh()
    return built


def test_commitment_is_published_before_the_numbers_and_verifies_after_the_game_L_ASSIGN_3(db):
    built = build_game("drawn", slug="verify-ok", cities=2, size=10)
    md = MafiaDraw.objects.get(game=built.game)
    post = PublicPost.objects.get(game=built.game, kind=PostKind.RECRUITMENT)
    assert md.numbers is None and md.commitment in post.body and post.published_at <= md.committed_at
    assert not Inbox.objects.filter(game=built.game, kind=LepraInboxKind.MAFIA).exists()
    role_services.do_name_mafia_numbers(built.game, {1: [1, 2], 2: [10, 3]}, acting_user=built.procurator,
                                        now=md.committed_at + timedelta(minutes=5))
    md.refresh_from_db()
    assert md.numbers == {"1": [1, 2], "2": [3, 10]} and md.numbers_by_site is False
    assert md.numbers_at > md.committed_at
    kinds = list(GameEvent.objects.filter(game=built.game, kind__startswith="draw.").order_by("at", "pk")
                 .values_list("kind", flat=True))
    assert kinds == ["draw.committed", "draw.numbers"]
    for city in City.objects.filter(game=built.game):
        named = {md.lists[str(city.number)][k - 1] for k in md.numbers[str(city.number)]}
        assert set(Resident.objects.filter(city=city, alignment=Alignment.MAFIA).values_list("name", flat=True)) == named

    _finish(built)
    out = StringIO()
    call_command("verify_draw", built.game.slug, stdout=out)
    assert f"published:  {md.commitment}\nrecomputed: {md.commitment}\nVerification OK" in out.getvalue()
    page = Client().get(f"/games/{built.game.slug}/draw/")
    assert page.status_code == 200
    html = page.content.decode()
    assert html.count(md.commitment) == 2 and md.salt in html and 'data-verified="yes"' in html
    assert draw.canonical_bytes(md.lists, md.salt).decode().replace('"', "&quot;") in html


@pytest.mark.parametrize("tamper", ["entry", "salt"])
def test_changing_one_list_entry_or_the_salt_fails_verification_L_ASSIGN_3(db, tamper):
    built = _finish(build_game("numbers", slug=f"verify-{tamper}", cities=2, size=10))
    md = MafiaDraw.objects.get(game=built.game)
    if tamper == "entry":
        lists = dict(md.lists)
        lists["2"] = list(lists["2"])
        lists["2"][0], lists["2"][1] = lists["2"][1], lists["2"][0]
        MafiaDraw.objects.filter(pk=md.pk).update(lists=lists)
    else:
        MafiaDraw.objects.filter(pk=md.pk).update(salt=("0" if md.salt[0] != "0" else "1") + md.salt[1:])
    with override("en"), pytest.raises(CommandError, match="Verification FAILED: The commitment"):
        call_command("verify_draw", built.game.slug, stdout=StringIO())
    html = Client().get(f"/games/{built.game.slug}/draw/").content.decode()
    assert 'data-verified="no"' in html
    assert "не совпадает со списками и солью" in html  # the page speaks the game's language


def test_verify_draw_command_exits_non_zero_on_mismatch_L_ASSIGN_3(db):
    # The command line's exit status, in-process (a subprocess would not see the test's transaction).
    built = _finish(build_game("numbers", slug="verify-exit", cities=1, size=6))
    MafiaDraw.objects.filter(game=built.game).update(salt="ab" * 32)
    from django.core.management import ManagementUtility

    with pytest.raises(SystemExit) as exc:
        ManagementUtility(["manage.py", "verify_draw", built.game.slug]).execute()
    assert exc.value.code == 1


@pytest.mark.parametrize("stage", ["drawn", "numbers"])
def test_verification_page_is_a_404_for_everyone_before_the_game_ends_L_ASSIGN_3(db, stage):
    built = build_game(stage, slug=f"early-{stage}", cities=2, size=10)
    mafioso = Resident.objects.filter(game=built.game, alignment=Alignment.MAFIA).first()
    viewers = [None, built.procurator, built.staff["consigliere"], built.staff["tribune1"], built.players[0]]
    viewers += [mafioso.user] if mafioso else []
    for user in viewers:
        client = Client()
        if user is not None:
            client.force_login(user)
        assert client.get(f"/games/{built.game.slug}/draw/").status_code == 404
    with pytest.raises(CommandError, match="The draw can be verified after the game."):
        with override("en"):
            call_command("verify_draw", built.game.slug, stdout=StringIO())


def test_the_draw_needs_published_lists_and_a_consigliere_and_runs_once(db):
    built = build_game("staffed", slug="draw-order", cities=2, size=10)
    with override("en"), pytest.raises(WrongState, match="Publish the city lists first."):
        role_services.do_start_mafia_draw(built.game, acting_user=built.procurator)
    from cities.recruitment_services import do_publish_city_lists

    do_publish_city_lists(built.game, acting_user=built.procurator)
    with override("en"), pytest.raises(NotAllowed, match="Only the Procurator of this game may do this."):
        role_services.do_start_mafia_draw(built.game, acting_user=built.staff["consigliere"])
    role_services.do_start_mafia_draw(built.game, acting_user=built.procurator)
    with override("en"), pytest.raises(WrongState, match="The mafia draw has already started."):
        role_services.do_start_mafia_draw(built.game, acting_user=built.procurator)
    assert MafiaDraw.objects.filter(game=built.game).count() == 1
    assert Inbox.objects.filter(game=built.game, kind=LepraInboxKind.NOTARY).count() == 1


@pytest.mark.parametrize("numbers, message", [
    ({1: [1, 2], 2: [1]}, "City 2: exactly 2 numbers are needed, 1 given."),
    ({1: [1, 1], 2: [1, 2]}, "City 1: the numbers must be distinct."),
    ({1: [0, 2], 2: [1, 2]}, "City 1: the numbers must be between 1 and 10."),
    ({1: [1, 11], 2: [1, 2]}, "City 1: the numbers must be between 1 and 10."),
    ({1: [1, 2]}, "City 2: no numbers given."),
])
def test_procurator_numbers_are_checked_and_nothing_changes_on_refusal_L_ASSIGN_2(db, numbers, message):
    built = build_game("drawn", slug="bad-numbers", cities=2, size=10)
    md = MafiaDraw.objects.get(game=built.game)
    later = md.committed_at + timedelta(seconds=30)
    with override("en"), pytest.raises(InvalidInput) as exc:
        role_services.do_name_mafia_numbers(built.game, numbers, acting_user=built.procurator, now=later)
    assert str(exc.value) == message
    md.refresh_from_db()
    assert md.numbers is None
    assert not Resident.objects.filter(game=built.game, alignment=Alignment.MAFIA).exists()
    assert not Inbox.objects.filter(game=built.game, kind=LepraInboxKind.MAFIA).exists()


def test_numbers_form_in_the_bar_page_names_the_mafia_and_the_page_is_procurator_only_L_ASSIGN_2(db):
    built = build_game("drawn", slug="numbers-form", cities=2, size=10)
    url = f"/games/{built.game.slug}/setup/numbers/"
    for user in (built.staff["consigliere"], built.players[0]):
        client = Client()
        client.force_login(user)
        assert client.get(url).status_code == 404
        assert client.post(url, {"city_1": "1, 2", "city_2": "3 4"}).status_code == 404
    client = Client()
    client.force_login(built.procurator)
    page = client.get(url).content.decode()
    md = MafiaDraw.objects.get(game=built.game)
    assert md.salt not in page and md.lists["1"][0] not in page  # the Procurator never sees the lists
    assert client.post(url, {"city_1": "1, 2, 3", "city_2": "3 4"}).status_code == 400
    response = client.post(url, {"city_1": "1, 2", "city_2": "3 4"})
    assert response.status_code == 302
    md.refresh_from_db()
    assert md.numbers == {"1": [1, 2], "2": [3, 4]}
    assert client.post(url, {"city_1": "5, 6", "city_2": "7 8"}).status_code == 409
    bar = Inbox.objects.get(game=built.game, kind=LepraInboxKind.BAR)
    assert "City 1: 1, 2" in bar.messages.last().body and "City 2: 3, 4" in bar.messages.last().body
    assert timezone.now() >= md.numbers_at


@pytest.mark.parametrize("size, mafia", [(5, 1), (8, 2), (13, 3), (18, 4), (23, 5)])
def test_the_site_draws_the_l_city_2_mafia_count_for_each_city_L_CITY_2(db, size, mafia):
    built = build_game("numbers", slug=f"count-{size}", cities=1, size=size)
    md = MafiaDraw.objects.get(game=built.game)
    assert len(md.numbers["1"]) == mafia
    assert Resident.objects.filter(game=built.game, alignment=Alignment.MAFIA).count() == mafia
    inbox = Inbox.objects.get(game=built.game, kind=LepraInboxKind.MAFIA)
    assert inbox.memberships.count() == mafia
