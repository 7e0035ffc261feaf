"""Lepra's own records told through the engine's notifications (``Notification.record``): a proxy request is told
to its city's Tribune only, with Lepra's words and link, while it waits (L-VOTE-4, L-NOM-6); deleting it deletes
its notifications."""
from __future__ import annotations

from datetime import timedelta

from django.contrib.contenttypes.models import ContentType
from django.utils import translation

from archive import notifications
from archive.models import Notification, NotificationKind
from archive.services import do_collect_notifications
from rulesets.lepra.day.services import do_accept_proxy, do_nominate, do_request_proxy
from rulesets.lepra.models import ProxyRequest
from tests.conftest import fresh
from tests.rulesets.lepra.day.day_helpers import MORNING, city1_day

MINUTE = timedelta(minutes=1)


def _asked(demo):
    day = city1_day(demo)
    nominee, nominator, absent = day.plain[0], day.plain[1], day.plain[5]
    do_nominate(nominee, acting_user=nominator.user, now=MORNING)
    request = do_request_proxy(nominee, acting_user=absent.user, now=MORNING + MINUTE)
    do_collect_notifications(now=MORNING + 2 * MINUTE)
    return day, absent, request


def test_a_proxy_request_is_told_to_its_citys_tribune_with_lepras_words_and_link_L_VOTE_4(demo):
    day, absent, request = _asked(demo)
    rows = list(Notification.objects.filter(record_type=ContentType.objects.get_for_model(ProxyRequest),
                                            record_id=request.pk))
    assert [(n.user_id, n.kind, n.record) for n in rows] == [(demo.tribune1.pk, NotificationKind.OFFER, request)]
    shown = notifications.notification_list_for(fresh(demo.tribune1))
    told = [(n.text, n.url) for n in shown if n.notification.record_id == request.pk]
    assert told == [(f"{demo.game.title}: {absent.name} просит о голосе по доверенности.",  # the game's language
                     f"/games/{demo.game.slug}/cities/1/day/")]
    with translation.override("en"):
        assert notifications.notification_text(rows[0], "Europe/Moscow") == (
            f"{demo.game.title}: {absent.name} asks for a proxy vote.")
    for other in (absent, *day.plain[:2]):
        assert not [n for n in notifications.notification_list_for(fresh(other.user))
                    if n.notification.record_id == request.pk]


def test_an_accepted_proxy_request_is_no_longer_shown_and_deleting_it_deletes_its_notification_L_NOM_6(demo):
    _day, _absent, request = _asked(demo)
    do_accept_proxy(request, acting_user=demo.tribune1, now=MORNING + 3 * MINUTE)
    assert not [n for n in notifications.notification_list_for(fresh(demo.tribune1))
                if n.notification.record_id == request.pk]
    assert request.notifications.count() == 1
    ProxyRequest.objects.filter(pk=request.pk).delete()
    assert not Notification.objects.filter(record_id=request.pk,
                                           record_type=ContentType.objects.get_for_model(ProxyRequest)).exists()
