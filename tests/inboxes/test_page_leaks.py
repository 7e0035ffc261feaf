"""Leak suite over real pages (DESIGN.md "Tests"; L-STAFF-6, L-INBOX-17, L-INBOX-20).

For each persona, fetch every page it can open in the demo game (game page, my inboxes, every inbox thread it
can read, every resident page, every published post, the admin index) and assert that:
* the Consigliere's name appears only for those who may know it (Procurator, Consigliere, mafia);
* the only secret facts shown (``data-fact`` markers: alignment, commissar, godfather) are exactly those
  the knowledge matrix gives the persona;
* no message text and no inbox title of an inbox the persona may not read appears anywhere (mafia plans,
  personal requests, the bar, the police station, the court, the notary's numbered lists).
The expected read sets come from the policy matrix test (written out from RULES.md, not from the policy).
"""
from __future__ import annotations

import html
import re

import pytest
from django.test import Client

from cities.models import Resident
from inboxes.models import Inbox, Message
from rulesets.lepra.demo import STAFF_NAMES
from tests.admin_keys import pks_from_keys
from tests.conftest import PERSONA_NAMES
from tests.support.page_leaks import client_for, expected_facts, facts_by_resident, pages_for
from tests.support.policy_matrix import expected_access, label

PASSWORD = "mafia-demo-2026"


@pytest.mark.parametrize("persona", PERSONA_NAMES)
def test_pages_show_only_what_the_persona_may_know_L_STAFF_6(demo, demo_pages, persona):
    user = getattr(demo, persona)
    pages = demo_pages.site(persona)
    everything = "\n".join(pages.values())
    allowed_read, _ = expected_access(demo)[persona]

    # Pages were really fetched: at least the game page, every resident and every published post.
    assert f"/games/{demo.game.slug}/" in pages
    assert sum(1 for u in pages if "/residents/" in u) == 60
    # The setup and numbers pages are the Procurator's alone; the draw's verification waits for the game's end.
    assert (f"/games/{demo.game.slug}/setup/" in pages) == (persona == "procurator")
    assert (f"/games/{demo.game.slug}/setup/numbers/" in pages) == (persona == "procurator")
    assert f"/games/{demo.game.slug}/draw/" not in pages

    # Who the Consigliere is (L-STAFF-4, L-STAFF-6).
    seat = Resident.objects.filter(game=demo.game, user=user).first() if user.is_authenticated else None
    may_know_consigliere = persona in ("procurator", "consigliere") or (seat is not None and seat.alignment == "mafia")
    assert (STAFF_NAMES["consigliere"] in everything) == may_know_consigliere

    # Alignments, commissars, godfathers: exactly the matrix.
    assert facts_by_resident(pages, demo) == expected_facts(demo, persona)

    # No text or title of an inbox the persona may not read (L-INBOX-17, L-INBOX-20).
    inboxes = list(Inbox.objects.filter(game=demo.game).select_related("city", "resident"))
    allowed_bodies = {m.body_html for m in Message.objects.filter(inbox__in=[i for i in inboxes if label(i) in allowed_read])}
    for inbox in inboxes:
        if label(inbox) in allowed_read:
            continue
        assert html.escape(inbox.title) not in everything, (persona, inbox.title)
        for message in Message.objects.filter(inbox=inbox):
            if message.body_html in allowed_bodies:
                continue  # the same words were also said where this persona may read them
            assert message.body_html not in everything, (persona, label(inbox), message.body[:60])
    # And the threads it may read were all opened and show their messages.
    readable_threads = [u for u in pages if u.startswith("/inboxes/")]
    assert len(readable_threads) == len(allowed_read)


def test_mafia_plans_are_visible_to_their_mafia_and_never_to_an_honest_neighbour_L_INBOX_4(demo):
    mafia1 = Inbox.objects.get(game=demo.game, kind="mafia", city__number=1)
    plan = Message.objects.filter(inbox=mafia1, author_resident__isnull=False).first()
    assert plan is not None
    assert plan.body_html in client_for(demo.mafioso).get(f"/inboxes/{mafia1.public_id}/").content.decode()
    response = client_for(demo.honest).get(f"/inboxes/{mafia1.public_id}/")
    assert response.status_code == 404
    assert plan.body not in response.content.decode()


@pytest.mark.parametrize("persona", ["procurator", "tribune1", "consigliere", "honest", "anonymous"])
def test_a_declined_offers_reason_appears_on_no_page_L_COMM_2(demo, persona):
    from tests.support.policy_matrix import _offer_inbox

    offer_inbox, plain = _offer_inbox(demo)
    pages = pages_for(demo, client_for(getattr(demo, persona)))
    assert "Secret reason of the candidate" not in "\n".join(pages.values())
    assert (f"/inboxes/{offer_inbox.public_id}/" in pages) == (persona in ("procurator", "honest"))
    assert (f"/inboxes/{plain.public_id}/" in pages) == (persona == "honest")


def _staff_pages(client: Client, game, detail: dict[str, set[int]] | None = None) -> dict[str, str]:
    """url -> HTML of the /staff/ console a staff member opens: the dashboard, every changelist (all rows), and
    the change page of each listed object named in ``detail`` (model name -> ids)."""
    from staff.console import staff_admin_site

    pages = {}
    response = client.get("/staff/")
    if response.status_code == 200:
        pages["/staff/"] = response.content.decode()
    for model in staff_admin_site._registry:
        url = f"/staff/{model._meta.app_label}/{model._meta.model_name}/"
        response = client.get(url + "?all=")
        if response.status_code != 200:
            continue
        body = response.content.decode()
        pages[url] = body
        wanted = (detail or {}).get(model._meta.model_name, set())
        keys = list(dict.fromkeys(re.findall(re.escape(url) + r"([a-z0-9]+)/change/", body)))
        for pk, key in zip(pks_from_keys(model, keys), keys, strict=True):
            if pk in wanted:
                pk = key  # noqa: PLW2901 - the console addresses the object by its key
                response = client.get(f"{url}{pk}/change/")
                if response.status_code == 200:
                    pages[f"{url}{pk}/change/"] = response.content.decode()
    return pages


def _new_lines(before: dict[str, str], after: dict[str, str]) -> dict[str, list[str]]:
    """Per page, the lines the page did not have before (all lines of a page that is new)."""
    out = {}
    for url, text in after.items():
        old = set(before.get(url, "").splitlines())
        added = [line for line in text.splitlines() if line not in old]
        if added:
            out[url] = added
    return out


def test_the_procurator_never_learns_which_mafioso_complained_about_the_consigliere_L_IMPEACH_3_L_STAFF_6(
        demo, django_capture_on_commit_callbacks):
    """The mafia of city 1 complain about the Consigliere and write twice; the Procurator answers. Everything the
    Procurator can open (the site's pages, the whole staff console, the e-mails he gets, his digest) gains
    nothing that names a mafioso or links to one: no name, no resident page, no resident or membership
    in the console."""
    from datetime import timedelta

    from django.core import mail

    from archive.models import NotificationKind
    from archive.services import do_send_notifications, do_update_notification_settings
    from cities.models import Alignment
    from inboxes.models import Membership
    from inboxes.posting import do_post_message
    from rulesets.lepra import no_confidence_services as sanctions
    from tests.conftest import DEMO_NOW, fresh

    now = DEMO_NOW + timedelta(minutes=30)
    game = demo.game
    do_update_notification_settings(acting_user=fresh(demo.procurator), time_zone="Europe/Moscow",
                                    channels=dict.fromkeys(NotificationKind.values, "digest_hourly"))
    client = client_for(demo.procurator)
    before = {**pages_for(demo, client), **_staff_pages(client, game)}
    mafia = list(Resident.objects.filter(game=game, city__number=1, alignment=Alignment.MAFIA).order_by("pk"))
    with django_capture_on_commit_callbacks(execute=True):
        case = sanctions.do_file_no_confidence_in_consigliere(game, "Консильери путает наши решения.",
                                                              acting_user=fresh(mafia[0].user), now=now)
        sanctions.do_write_in_mafia_complaint(case, "Подтверждаем всем городом.", acting_user=fresh(mafia[1].user),
                                              now=now + timedelta(seconds=10))
        do_post_message(case.inbox, "Рассмотрю до вечера.", acting_user=fresh(demo.procurator),
                        now=now + timedelta(minutes=1))
    from cities.models import GameEvent
    from inboxes.models import Message

    detail = {"noconfidencecase": {case.pk}, "inbox": {case.inbox_id},
              "message": set(Message.objects.filter(inbox=case.inbox).values_list("pk", flat=True)),
              "membership": set(Membership.objects.filter(inbox=case.inbox).values_list("pk", flat=True)),
              "gameevent": set(GameEvent.objects.filter(game=game, at__gte=now).values_list("pk", flat=True))}
    after = {**pages_for(demo, client), **_staff_pages(client, game, detail)}
    added = _new_lines(before, after)
    # The complaint really reached him: its thread, the console's case and its dashboard line.
    thread = f"/inboxes/{case.inbox.public_id}/"
    assert thread in after and "Консильери путает наши решения." in after[thread]
    assert "Мафия города Малиновка" in after[thread]
    assert f"/staff/lepra/noconfidencecase/{case.public_id}/change/" in after
    assert "Мафия города Малиновка" in after["/staff/lepra/noconfidencecase/"]
    secret_lines = []
    memberships = list(Membership.objects.filter(inbox=case.inbox).values_list("pk", flat=True))
    for url, lines in added.items():
        for line in lines:
            for r in mafia:
                if (html.escape(r.name) in line or f"/residents/{r.public_id}/" in line
                        or f"/staff/cities/resident/{r.public_id}/" in line or r.user.username in line):
                    secret_lines.append((url, r.name, line.strip()[:200]))
            for pk in memberships:
                if f"/staff/inboxes/membership/{pk}/" in line:
                    secret_lines.append((url, "membership", line.strip()[:200]))
    assert secret_lines == []
    # Nor do the membership rows of the complaint answer in the console.
    for pk in memberships:
        response = client.get(f"/staff/inboxes/membership/{pk}/change/", follow=True)
        assert all(r.name not in response.content.decode() for r in mafia)
    # His e-mails and his digest name the city, never a mafioso.
    mails = [m for m in mail.outbox if demo.procurator.email in m.to]
    assert len(mails) == 1 and "Мафия города Малиновка" in mails[0].body
    sent_before = len(mail.outbox)
    do_send_notifications(now=now + timedelta(minutes=5))
    lines = [m.body for m in mail.outbox[sent_before:] if demo.procurator.email in m.to]
    assert any("Мафия города Малиновка" in line for line in lines)
    for text in [m.subject + m.body for m in mails] + lines:
        assert all(r.name not in text and r.user.username not in text for r in mafia), text
