"""The links a Lepra thread page shows to Lepra's staff pages (``LepraRuleset.thread_links``, rendered by the shared
thread page): the mafia's role acknowledgement in a mafia inbox (L-ASSIGN-4) and the complaint of no confidence
(L-IMPEACH-3) from the inboxes it is written from, for the players there, never for the staff they complain of."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation

from cities.models import GameStatus
from inboxes.models import Inbox
from kernel.rulesets import get_ruleset
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra import no_confidence_services as services
from tests.conftest import DEMO_NOW, fresh

ROLE = "mafia-role-link"
NO_CONFIDENCE = "no-confidence-link"
IN_CONSIGLIERE = "No confidence in the Consigliere: write to the Procurator"
IN_ARBITER = "No confidence in the Supreme Arbiter: complain to the Procurator"


def _links(user, inbox) -> list[tuple[str, str, str]]:
    """The thread page's links as (CSS class, URL, text), each checked in the page of ``inbox`` as ``user`` sees it."""
    client = Client()
    client.force_login(user)
    response = client.get(reverse("inbox_thread", args=[inbox.public_id]))
    assert response.status_code == 200
    links = response.context["thread_links"]
    body = response.content.decode()
    for url, text, css_class in links:
        assert f'<p><a class="{css_class}" href="{url}">{text}</a></p>' in body
    assert body.count(f'class="{ROLE}"') + body.count(f'class="{NO_CONFIDENCE}"') == len(links)
    return [(css_class, url, str(text)) for url, text, css_class in links]


@pytest.mark.django_db
def test_a_mafia_inbox_links_the_role_acknowledgement_and_the_complaint_for_the_mafia_only_L_ASSIGN_4(demo):
    slug = demo.game.slug
    mafia = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.MAFIA, city__number=1)
    role, complaint = reverse("mafia_role", args=[slug]), reverse("no_confidence", args=[slug])
    assert [(css, url) for css, url, _text in _links(demo.mafioso, mafia)] == [(ROLE, role), (NO_CONFIDENCE, complaint)]
    # The Consigliere moderates the mafia inbox: the acknowledgement link, no complaint of themselves.
    assert [(css, url) for css, url, _text in _links(demo.consigliere, mafia)] == [(ROLE, role)]


@pytest.mark.django_db
def test_the_links_follow_the_kind_the_viewer_and_the_games_state_L_IMPEACH_3(demo):
    spec, slug = get_ruleset("lepra"), demo.game.slug
    complaint_url = reverse("no_confidence", args=[slug])
    honest = demo.seat("honest")
    personal = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.PERSONAL, resident=honest)
    mafia = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.MAFIA, city__number=1)
    arbiter_case = services.do_file_no_confidence_in_arbiter(demo.game, "Арбитр молчит.", acting_user=demo.honest,
                                                             now=DEMO_NOW + timedelta(minutes=30))
    mafia_case = services.do_file_no_confidence_in_consigliere(demo.game, "Консильери молчит.",
                                                               acting_user=fresh(demo.mafioso),
                                                               now=DEMO_NOW + timedelta(minutes=31))
    with translation.override("en"):
        def links(user, inbox, *, can_moderate=False):
            return [(css, url, str(text)) for url, text, css in spec.thread_links(user, inbox,
                                                                                  can_moderate=can_moderate)]

        assert links(demo.honest, personal) == [(NO_CONFIDENCE, complaint_url, IN_ARBITER)]
        assert links(demo.honest, personal, can_moderate=True) == [(NO_CONFIDENCE, complaint_url, IN_ARBITER)]
        assert links(demo.tribune1, personal, can_moderate=True) == []  # another's personal inbox
        assert links(demo.honest, arbiter_case.inbox) == [(NO_CONFIDENCE, complaint_url, IN_ARBITER)]
        assert links(demo.procurator, arbiter_case.inbox, can_moderate=True) == []
        assert links(demo.mafioso, mafia_case.inbox) == [(NO_CONFIDENCE, complaint_url, IN_CONSIGLIERE)]
        assert links(demo.procurator, mafia_case.inbox, can_moderate=True) == []
        assert links(demo.mafioso, mafia)[1] == (NO_CONFIDENCE, complaint_url, IN_CONSIGLIERE)
        city = Inbox.objects.filter(game=demo.game, kind=LepraInboxKind.CITY).first()
        assert links(demo.honest, city) == []
        demo.game.status = GameStatus.FINISHED
        for inbox in (personal, mafia, arbiter_case.inbox, mafia_case.inbox):
            inbox.game = demo.game
            assert links(demo.mafioso if inbox.kind != LepraInboxKind.PERSONAL else demo.honest, inbox) == []
