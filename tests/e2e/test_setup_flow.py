"""The setup of a Lepra game in a real browser (issue 9; RULES.md L-CITY, L-STAFF, L-ASSIGN, L-COMM): the
Procurator creates the game, 24 players sign up on the game page, three cities of 8 are formed, the staff
appointed, the lists published, the mafia drawn and the commissars offered their post."""
from __future__ import annotations

import pytest

from cities.models import Alignment, Resident
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra import seats

from .builder import CITY_NAMES, CITY_SIZE, PLAYER_NAMES, STAFF_NAMES, city_heading_counts
from .pages import Person, ru

# xdist_group: all tests that start processes run on one worker, one at a time (tests/conftest.py).
pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("processes")]


def test_procurator_sets_up_three_cities_of_8_in_the_browser_L_CITY_L_ASSIGN_L_COMM(lepra, screenshots):
    lepra.stack.clock.set(lepra.stack.clock.next_day_at(9))
    lepra.set_up_in_the_browser()
    game = lepra.game()
    proc = lepra.procurator
    proc.open(lepra.setup_url())
    screenshots.take(proc.page, "setup")

    # 24 sign-ups, three cities of 8 whose lists on the page are the seated residents (L-CITY-2).
    assert proc.text("#step-signups h2").endswith(f"({len(PLAYER_NAMES)})")
    assert city_heading_counts(proc) == {name: CITY_SIZE for name in CITY_NAMES}
    seated = {city: sorted(Resident.objects.filter(game=game, city__name=city).values_list("name", flat=True))
              for city in CITY_NAMES}
    assert sorted(n for names in seated.values() for n in names) == sorted(PLAYER_NAMES)
    for city, names in seated.items():
        heading = proc.page.locator("#step-cities h3", has_text=city)
        assert sorted(heading.locator("xpath=following-sibling::p[1]").inner_text().split(", ")) == names

    # The staff as appointed, each in their place (L-STAFF-1).
    assert sorted(proc.texts("#step-staff ul.staff li")) == sorted(
        [f"{ru('Procurator')}: {STAFF_NAMES['procurator']}", f"{ru('Supreme Arbiter')}: {STAFF_NAMES['arbiter']}",
         f"{ru('Consigliere')}: {STAFF_NAMES['consigliere']}"]
        + [f"{ru('Tribune')} ({city}): {STAFF_NAMES[f'tribune{n}']}" for n, city in enumerate(CITY_NAMES, 1)])

    # The draw: the commitment on the setup page and on the public game page, logged out (L-ASSIGN-3); the
    # numbers the site drew are shown per city and name exactly the mafia of the notary lists (L-ASSIGN-2).
    draw = lepra.mafia_draw()
    assert draw.commitment in proc.text("#step-draw")
    visitor = Person(lepra.browser, lepra.stack, None, label="visitor")
    visitor.open(f"/games/{lepra.slug}/")
    assert draw.commitment in visitor.text("main")
    for number, city in enumerate(CITY_NAMES, 1):
        numbers = draw.numbers[str(number)]
        assert f"{city}: {', '.join(map(str, numbers))}" in proc.texts("#step-draw li")
        mafia = {draw.lists[str(number)][k - 1] for k in numbers}
        assert set(Resident.objects.filter(game=game, city__name=city, alignment=Alignment.MAFIA)
                   .values_list("name", flat=True)) == mafia

    # The commissars: one accepted offer per city, every earlier offer declined (L-COMM).
    for number in range(1, len(CITY_NAMES) + 1):
        answers = proc.page.locator(f"tr[data-city='{number}'] .offer").evaluate_all(
            "spans => spans.map(s => s.dataset.answer)")
        assert answers[-1] == "accepted" and set(answers[:-1]) <= {"declined"}, answers
    commissars = {r.city.name: r.name for r in Resident.objects.filter(seats.rank_q("is_commissar"), game=game)
                  .select_related("city")}
    assert sorted(commissars) == sorted(CITY_NAMES)

    # The Procurator never sees the notary's lists: its inbox is the 404 page for him (L-STAFF-6).
    notary = lepra.inbox(LepraInboxKind.NOTARY)
    proc.open(f"/inboxes/{notary.public_id}/", status=404)
    assert proc.text("main h1") == ru("Not found")
    assert draw.salt not in proc.text("main")

    # Each Tribune learns the commissar of their own city, and only that one (L-COMM-4).
    for number, city in enumerate(CITY_NAMES, 1):
        tribune = lepra.staff(f"tribune{number}", form_login=number == 1)
        tribune.open(f"/games/{lepra.slug}/")
        known = tribune.text("main .known-commissars")
        assert f"{city}: {commissars[city]}" in known
        assert all(f"{other}: " not in known for other in CITY_NAMES if other != city)
    visitor.close()

    # The staff console lists each staff member's own role in the game, and nothing else (L-STAFF-6).
    proc.open("/staff/")
    assert [(row.get_attribute("data-role"), row.locator("th").inner_text().strip())
            for row in proc.page.locator("section.staff-roles tr[data-role]").all()] == [("procurator", lepra.title)]
