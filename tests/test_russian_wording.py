"""Words a tester found wrong on the Lepra demo: the site calls an inbox «ящик» (never «инбокс»), and the staff
console's page titles read as Russian whatever the model's verbose name («Просмотр: житель», not «Просмотреть
житель»)."""
from __future__ import annotations

import re

import time_machine
from django.test import Client

from archive.models import Notification, NotificationKind
from inboxes.models import Inbox
from rulesets.lepra.kinds import LepraInboxKind
from inboxes.posting import do_post_message
from tests.conftest import fresh
from tests.staff.conftest import NOW
from tests.support.staff_console import staff_client


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


def test_the_notifications_page_names_the_zone_its_times_are_shown_in(demo):
    client = Client(HTTP_ACCEPT_LANGUAGE="ru")
    client.force_login(demo.honest)
    square = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)
    message = do_post_message(square, f"@{demo.honest.public_name} привет", acting_user=fresh(demo.tribune1))
    Notification.objects.create(user=demo.honest, game=demo.game, kind=NotificationKind.MENTION, message=message,
                                created_at=message.received_at)
    page = client.get("/me/notifications/").content.decode()
    assert "Время указано в поясе Europe/Moscow." in page and "MSK</time>" in page
    assert "поясе UTC" not in page


def test_the_staff_message_list_shows_times_in_the_viewers_zone_with_its_abbreviation(demo):
    client = staff_client(demo.procurator)
    body = client.get("/staff/inboxes/message/?all=").content.decode()
    cells = re.findall(r'<(?:th|td) class="field-received"[^>]*>(.*?)</(?:th|td)>', body, re.DOTALL)
    assert cells and all(re.sub(r"<[^>]+>", "", c).strip().endswith(" MSK") for c in cells), cells[:3]
    user = fresh(demo.procurator)
    user.time_zone = "Asia/Tokyo"
    user.save(update_fields=["time_zone"])
    body = client.get("/staff/inboxes/message/?all=").content.decode()
    cells = re.findall(r'<(?:th|td) class="field-received"[^>]*>(.*?)</(?:th|td)>', body, re.DOTALL)
    assert cells and all(re.sub(r"<[^>]+>", "", c).strip().endswith(" JST") for c in cells), cells[:3]


def test_an_empty_notifications_page_names_no_zone(demo):
    client = Client(HTTP_ACCEPT_LANGUAGE="ru")
    client.force_login(demo.honest)
    page = client.get("/me/notifications/").content.decode()
    assert "Уведомлений нет." in page and "Время указано" not in page
