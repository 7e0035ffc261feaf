"""The leak suite's life-cycle axis (DESIGN.md "Tests"; RULES.md L-STAFF-6 and its [interp] "knowledge is dated",
L-DEATH-1, L-SPIRIT-2, L-REPLACE-1, L-INBOX-17, L-INBOX-20).

One world, built once for the module inside a transaction that is rolled back at the end: in the demo game, at
``DEATH`` the mafioso of city 1 is killed (dead), the commissar of city 1 is executed (dead), the honest persona of
city 1 is killed as a spirit, and another mafioso of city 1 is replaced by a newcomer (the old account and the
new). Then, after the deaths, secrets are created: the godfather of city 1 steps down and another mafioso becomes
godfather, the commissar of city 2 is dated as named after the deaths, the mafia of city 1 and the police station
talk. Every persona (staff, the living, the dead, the spirit, both accounts of the replaced seat, visitors) then
fetches every page it can open once (game page, inbox list, every resident, every post, every inbox thread, the
night page, the city day pages, the archive pages and exports, the staff console's index and lists), and asks the
policy's four forms for every inbox. The tests assert, persona by persona, the exact set of facts shown on resident
pages and in the JSON export, the exact threads opened, the exact inboxes postable, the Consigliere's name, and
that no text of an inbox the persona may not read (the post-death talk included) appears anywhere.

The expectations are written out from RULES.md here, not read from the policy.
"""
from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import override

from cities.models import Resident
from inboxes import membership_services, policies, posting
from inboxes.models import Inbox, Message
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra import seats
from rulesets.lepra.demo import STAFF_NAMES
from rulesets.lepra.models import LepraSeat
from tests.conftest import fresh, load_personas
from tests.support.page_leaks import client_for, facts_by_resident, pages_for
from tests.support.policy_matrix import expected_access, label

K = LepraInboxKind
# After the demo's rows were written (staff roles are dated by the wall clock when the session loads the demo).
DEATH = timezone.now() + timedelta(hours=1)
AFTER = DEATH + timedelta(hours=1)
MAFIA_AFTER = "План после похорон: сегодня ночью решаем без Обормота."
POLICE_AFTER = "Комиссары после похорон: сверяем проверки без Гулливера."
LIFECYCLE = ["mafioso", "commissar", "honest", "replaced_old", "replaced_new"]
PERSONAS = ["procurator", "tribune1", "tribune2", "arbiter", "consigliere", "mafioso", "commissar", "honest", "judge",
            "resident2", "replaced_old", "replaced_new", "anonymous", "outsider"]


@dataclass
class World:
    """What the module's tests read: per persona the pages (url -> html), the export, the policy's answers and the
    expectations, all computed inside the rolled-back transaction."""

    pages: dict = field(default_factory=dict)
    export: dict = field(default_factory=dict)
    read: dict = field(default_factory=dict)        # persona -> labels can_read_inbox
    listed: dict = field(default_factory=dict)      # persona -> labels readable_inboxes
    audience: dict = field(default_factory=dict)    # persona -> labels where readers_of_inbox holds the user
    post: dict = field(default_factory=dict)        # persona -> labels can_post_in_inbox
    expected_read: dict = field(default_factory=dict)
    expected_post: dict = field(default_factory=dict)
    expected_facts: dict = field(default_factory=dict)
    resident_facts: dict = field(default_factory=dict)
    unreadable: dict = field(default_factory=dict)  # persona -> [(label, title, [body_html])] it may not read
    names: dict = field(default_factory=dict)


def _extra_urls(game) -> list[str]:
    """The pages beyond ``pages_for``: the night, the city days, the archive pages and exports, the console."""
    slug = game.slug
    urls = [reverse("night_page", args=[slug]), reverse("archive_mentions")]
    urls += [reverse("city_day", args=[slug, n]) for n in (1, 2, 3)]
    urls += [reverse(name, args=[slug]) for name in ("archive_game", "archive_timeline", "archive_votes",
                                                       "archive_map", "archive_export_print")]
    urls += [reverse("archive_search", args=[slug]) + "?q=%D0%BF%D0%BB%D0%B0%D0%BD"]  # «план»
    urls += ["/staff/", "/staff/cities/resident/?all=", "/staff/inboxes/inbox/?all=", "/staff/inboxes/message/?all=",
             "/staff/cities/gameevent/?all="]
    return urls


def _facts_from_export(data: dict) -> set[tuple[str, str]]:
    facts = set()
    for r in data.get("residents", []):
        if r["alignment"]:
            facts.add((r["name"], f"alignment:{r['alignment']}"))
        if r["commissar"]:
            facts.add((r["name"], "commissar"))
        if r["godfather"]:
            facts.add((r["name"], "godfather"))
    return facts


def _build(demo) -> dict:
    """Apply the deaths, the replacement and the post-death secrets; return the cast (names and users)."""
    game = demo.game
    procurator = fresh(demo.procurator)
    city1_mafia = list(Resident.objects.filter(game=game, city__number=1, alignment="mafia").order_by("name"))
    dead_mafioso = demo.seat("mafioso")
    godfather = next(r for r in city1_mafia if seats.is_godfather(r))
    others = [r for r in city1_mafia if r.pk not in (dead_mafioso.pk, godfather.pk)]
    replaced, heir = others[0], others[1]
    old_user = replaced.user
    newcomer = get_user_model().objects.create_user("newcomer", "newcomer@example.com", "x-secret-123",
                                                    display_name="Novichok")
    membership_services.do_kill_resident(dead_mafioso, "killed", acting_user=None, now=DEATH)
    membership_services.do_kill_resident(demo.seat("commissar"), "executed", acting_user=None, now=DEATH)
    membership_services.do_kill_resident(demo.seat("honest"), "killed", spirit=True, acting_user=None, now=DEATH)
    membership_services.do_replace_player(replaced, newcomer, acting_user=procurator, now=DEATH)
    # Secrets created after the deaths (L-STAFF-6 [interp]: the dead learn none of them).
    seats.do_set_seat_flags(Resident.objects.get(pk=godfather.pk), is_godfather=False, acting_user=None, now=AFTER)
    seats.do_set_seat_flags(Resident.objects.get(pk=heir.pk), is_godfather=True, acting_user=None, now=AFTER)
    late_commissar = Resident.objects.get(seats.rank_q("is_commissar"), game=game, city__number=2)
    LepraSeat.objects.filter(pk=late_commissar.pk).update(commissar_since=AFTER)  # as if named after the deaths
    mafia1 = Inbox.objects.get(game=game, kind=K.MAFIA, city__number=1, rolled_over_at__isnull=True)
    posting.do_post_message(mafia1, MAFIA_AFTER, acting_user=fresh(heir.user), now=AFTER)
    police = Inbox.objects.get(game=game, kind=K.POLICE, rolled_over_at__isnull=True)
    living_commissar = Resident.objects.get(seats.rank_q("is_commissar"), game=game, city__number=3)
    posting.do_post_message(police, POLICE_AFTER, acting_user=fresh(living_commissar.user), now=AFTER)
    return {"old_godfather": godfather.name, "heir": heir.name, "replaced": Resident.objects.get(pk=replaced.pk).name,
            "late_commissar": late_commissar.name, "old_user": old_user, "newcomer": newcomer,
            "dead_mafioso": dead_mafioso.name, "dead_commissar": demo.seat("commissar").name,
            "spirit": demo.seat("honest").name}


def _expected_facts(demo, cast, persona) -> set[tuple[str, str]]:
    """L-STAFF-6 with dated knowledge, written out for this world."""
    residents = list(Resident.objects.filter(game=demo.game).select_related("city"))
    by_name = {r.name: r for r in residents}
    godfathers_now = {r.name for r in residents if seats.is_godfather(r)}
    commissars = {r.name for r in residents if seats.is_commissar(r)}

    def own(name):
        return {(name, f"alignment:{by_name[name].alignment}")}

    def city_mafia(number):
        return {(r.name, "alignment:mafia") for r in residents if r.alignment == "mafia" and r.city.number == number}

    if persona == "consigliere":
        return {(r.name, f"alignment:{r.alignment}") for r in residents} | {(n, "godfather") for n in godfathers_now}
    if persona == "procurator":
        return {(n, "commissar") for n in commissars}
    if persona in ("tribune1", "tribune2"):
        number = int(persona[-1])
        return {(r.name, "commissar") for r in residents if seats.is_commissar(r) and r.city.number == number}
    if persona == "mafioso":  # dead: the partners and the godfather of the moment of death
        return own(cast["dead_mafioso"]) | city_mafia(1) | {(cast["old_godfather"], "godfather")}
    if persona == "commissar":  # dead: the commissars of the moment of death, himself included
        return own(cast["dead_commissar"]) | {(n, "commissar") for n in commissars - {cast["late_commissar"]}}
    if persona == "honest":  # the spirit
        return own(cast["spirit"])
    if persona == "replaced_new":  # the living seat: its partners and the godfather of now
        return (own(cast["replaced"]) | city_mafia(1)
                | {(n, "godfather") for n in godfathers_now if by_name[n].city.number == 1})
    if persona in ("judge", "resident2"):
        return own(Resident.objects.get(game=demo.game, user=getattr(demo, persona)).name)
    return set()  # the replaced player's old account, visitors, outsiders, the Arbiter


def _expected_access(demo, cast) -> tuple[dict, dict]:
    """(read, post) labels per persona: the matrix of tests/inboxes/test_policy_matrix.py for the unchanged
    personas, and for the life-cycle ones the L-DEATH-1 / L-SPIRIT-2 / L-REPLACE-1 changes, written out."""
    base = expected_access(demo)
    read = {p: set(base[p][0]) for p in base}
    post = {p: set(base[p][1]) for p in base}
    m, c, s, r = cast["dead_mafioso"], cast["dead_commissar"], cast["spirit"], cast["replaced"]
    read["mafioso"] = read["mafioso"] - {"mafia1"} | {"cemetery"}
    post["mafioso"] = {"cemetery", f"personal:{m}"}
    read["commissar"] = read["commissar"] - {"police"} | {"cemetery"}
    post["commissar"] = {"cemetery", f"personal:{c}"}
    post["honest"] = {f"personal:{s}"}  # a spirit: banned in the city inbox, no voting open today
    read["replaced_new"] = post["replaced_new"] = {"city1", f"personal:{r}", "mafia1"}
    read["replaced_old"] = post["replaced_old"] = set()
    return read, post


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker) -> World:
    """Build the world, crawl it for every persona and ask the policy, then roll everything back."""
    w = World()
    with django_db_blocker.unblock(), transaction.atomic():
        demo = load_personas()
        cast = _build(demo)
        users = {p: getattr(demo, p) for p in PERSONAS if hasattr(demo, p)}
        users["replaced_old"], users["replaced_new"] = cast["old_user"], cast["newcomer"]
        w.names = {k: v for k, v in cast.items() if isinstance(v, str)}
        w.expected_read, w.expected_post = _expected_access(demo, cast)
        inboxes = list(Inbox.objects.filter(game=demo.game).select_related("game", "city", "resident"))
        labels = {i.pk: label(i) for i in inboxes}
        audience = {i.pk: set(policies.readers_of_inbox(i).values_list("pk", flat=True)) for i in inboxes}
        bodies = {i.pk: list(Message.objects.filter(inbox=i).values_list("body_html", flat=True)) for i in inboxes}
        for persona, user in users.items():
            w.expected_facts[persona] = _expected_facts(demo, cast, persona)
            client = client_for(user)
            pages = pages_for(demo, client)
            for url in _extra_urls(demo.game):
                response = client.get(url, follow=True)
                final = response.redirect_chain[-1][0] if response.redirect_chain else url
                if response.status_code == 200 and "/login/" not in final:
                    pages[url] = response.content.decode()
            export = client.get(reverse("archive_export_json", args=[demo.game.slug]))
            w.export[persona] = json.loads(export.content) if export.status_code == 200 else None
            w.pages[persona] = pages
            resident_pages = {u: t for u, t in pages.items() if "/residents/" in u}
            w.resident_facts[persona] = facts_by_resident(resident_pages, demo)
            u = fresh(user)
            w.read[persona] = {labels[i.pk] for i in inboxes if policies.can_read_inbox(u, i)}
            w.listed[persona] = {labels[pk] for pk in policies.readable_inboxes(u, demo.game).values_list("pk", flat=True)}
            w.post[persona] = {labels[i.pk] for i in inboxes if policies.can_post_in_inbox(u, i)}
            w.audience[persona] = {labels[pk] for pk, readers in audience.items() if getattr(user, "pk", None) in readers}
            allowed = w.expected_read.get(persona, set())
            allowed_bodies = {b for pk in labels if labels[pk] in allowed for b in bodies[pk]}
            w.unreadable[persona] = [(labels[i.pk], i.title, [b for b in bodies[i.pk] if b not in allowed_bodies])
                                     for i in inboxes if labels[i.pk] not in allowed]
        transaction.set_rollback(True)
    return w


@pytest.mark.parametrize("persona", PERSONAS)
def test_resident_pages_and_the_export_show_exactly_the_dated_knowledge_L_STAFF_6(world, persona):
    assert world.resident_facts[persona] == world.expected_facts[persona]
    if world.export[persona] is not None:
        assert _facts_from_export(world.export[persona]) == world.expected_facts[persona]


@pytest.mark.parametrize("persona", PERSONAS)
def test_the_four_forms_of_the_policy_give_exactly_the_life_cycle_matrix_L_DEATH_1(world, persona):
    assert world.read[persona] == world.expected_read[persona]
    assert world.listed[persona] == world.expected_read[persona]
    # The audience of what is posted now: the dead read their secret inboxes (the commissar's offer among them) and
    # check channel as they were at death and are told nothing posted after it (L-STAFF-6 [interp]).
    dated = ("offer:", "secret:", "check") if persona in ("mafioso", "commissar", "honest") else ()
    assert world.audience[persona] == {lab for lab in world.expected_read[persona] if not lab.startswith(dated)}
    assert world.post[persona] == world.expected_post[persona]


@pytest.mark.parametrize("persona", PERSONAS)
def test_no_page_shows_a_text_or_title_of_an_inbox_the_persona_may_not_read_L_INBOX_20(world, persona):
    everything = "\n".join(world.pages[persona].values())
    if world.export[persona] is not None:
        everything += json.dumps(world.export[persona], ensure_ascii=False)
    kind_names = set()
    for language in ("en", "ru"):
        with override(language):
            kind_names |= {str(name) for _value, name in K.choices}
    for lab, title, bodies in world.unreadable[persona]:
        if title not in kind_names:  # a title that is only the kind's name is no secret (forms list the kinds)
            assert html.escape(title) not in everything, (persona, lab)
        for body in bodies:
            assert body not in everything, (persona, lab, body[:60])
    threads = [u for u in world.pages[persona] if u.startswith("/inboxes/")]
    assert len(threads) == len(world.expected_read[persona])


@pytest.mark.parametrize("persona", PERSONAS)
def test_the_consigliere_is_named_only_to_those_who_may_know_L_STAFF_4(world, persona):
    everything = "\n".join(world.pages[persona].values())
    # The dead mafioso knew the Consigliere at death (appointed before the draw): he keeps that knowledge.
    may_know = persona in ("procurator", "consigliere", "mafioso", "replaced_new")
    assert (STAFF_NAMES["consigliere"] in everything) == may_know


def test_the_dead_learn_nothing_created_after_their_death_L_STAFF_6(world):
    """The post-death secrets named one by one: the new godfather, the mafia's and the police's talk, the
    commissar dated after the death, the living roster of commissars on the game page."""
    dead_mafioso, dead_commissar = world.pages["mafioso"], world.pages["commissar"]
    heir = world.names["heir"]
    assert (heir, "godfather") not in world.resident_facts["mafioso"]
    assert (world.names["old_godfather"], "godfather") in world.resident_facts["mafioso"]
    assert (heir, "godfather") in world.resident_facts["replaced_new"]
    assert not any(html.escape(MAFIA_AFTER) in page for page in dead_mafioso.values())
    assert any(html.escape(MAFIA_AFTER) in page for page in world.pages["replaced_new"].values())
    assert not any(html.escape(POLICE_AFTER) in page for page in dead_commissar.values())
    assert (world.names["late_commissar"], "commissar") not in world.resident_facts["commissar"]
    game_page = next(t for u, t in dead_commissar.items() if u.endswith("/") and u.count("/") == 3 and "/games/" in u)
    assert 'class="known-commissars"' not in game_page
    procurator_game_page = next(t for u, t in world.pages["procurator"].items()
                                if u.endswith("/") and u.count("/") == 3 and "/games/" in u)
    assert 'class="known-commissars"' in procurator_game_page
    roster = procurator_game_page.split('class="known-commissars"')[1].split("</p>")[0]
    assert world.names["dead_commissar"] not in roster and world.names["late_commissar"] in roster


def test_the_old_account_of_a_replaced_seat_keeps_nothing_L_REPLACE_1(world):
    assert world.read["replaced_old"] == set()
    assert world.resident_facts["replaced_old"] == set()
    assert not any(html.escape(MAFIA_AFTER) in page for page in world.pages["replaced_old"].values())
