"""Words a tester found wrong on the Lepra demo: the site calls an inbox «ящик» (never «инбокс»), and the staff
console's page titles read as Russian whatever the model's verbose name («Просмотр: житель», not «Просмотреть
житель»)."""
from __future__ import annotations

import re

import time_machine
from django.test import Client

from tests.cities.test_staff_admin import staff_client
from tests.staff.conftest import NOW


def test_the_no_confidence_page_says_yashchik_not_inboks(demo):
    client = Client(HTTP_ACCEPT_LANGUAGE="ru")
    client.force_login(demo.honest)
    with time_machine.travel(NOW, tick=False):
        page = client.get(f"/games/{demo.game.slug}/no-confidence/").content.decode()
    assert "он отвечает в её ящике." in page
    assert "инбокс" not in page


def test_a_residents_page_in_the_staff_console_is_titled_prosmotr_zhitel(demo):
    client = staff_client(demo.procurator)
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "ru"
    listing = client.get("/staff/cities/resident/?all=").content.decode()
    change_url = re.search(r'href="(/staff/cities/resident/[^"/]+/change/)', listing).group(1)
    page = client.get(change_url).content.decode()
    title = re.search(r"<title>(.*?)</title>", page, re.DOTALL).group(1)
    assert title.split(" | ")[1] in ("Просмотр: житель", "Изменение: житель"), title
    assert "Просмотреть житель" not in page and "Изменить житель" not in page
