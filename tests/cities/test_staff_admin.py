"""The game staff's admin site at /staff/ (issue 3 item 8; RULES.md L-STAFF-5, L-STAFF-6, L-INBOX-17/18/20).

For each demo persona: the exact inboxes, residents, memberships and messages of the changelists, compared with
the read sets written out from RULES.md in tests/inboxes/test_policy_matrix.py (``expected_access``); the
Tribune of city 2 unable to open, list, filter, search, autocomplete or guess a city-1 object (the same answer
as a missing id); alignments only for the Consigliere; the Procurator seeing commissars but no alignment and no
mafia inbox; a superuser with no game role refused; the moderation actions going through the services with
their audit rows and messages; and a leak sweep over every /staff/ page each persona can reach.
"""
from __future__ import annotations

import html
import json
import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.test import Client

from cities.models import GameEvent, Resident
from inboxes.models import Inbox, Membership, MembershipState, Message
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra.demo import STAFF_NAMES
from tests.admin_keys import key_of, missing_key, post_console_action
from tests.conftest import PERSONA_NAMES
from tests.support.page_leaks import expected_facts
from tests.support.policy_matrix import expected_access, label
from tests.support.staff_console import (
    CHANGELIST,
    MODELS,
    STAFF_PERSONAS,
    _normalized,
    flashed,
    listed_ids,
    nothing_found,
    readable_inbox_ids,
    staff_client,
    without_kind_filter_choices,
)

FACT = re.compile(r'data-fact="([^"]+)"')


def expected_residents(demo, persona: str) -> set[int]:
    qs = Resident.objects.filter(game=demo.game)
    if persona in ("tribune1", "tribune2"):
        qs = qs.filter(city__number=int(persona[-1]))
    elif persona not in ("procurator", "arbiter", "consigliere"):
        return set()
    return set(qs.values_list("pk", flat=True))


# --------------------------------------------------------------------------------------------------------------
# Who may enter (L-STAFF-5)
# --------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("persona", ["mafioso", "honest", "commissar", "judge", "resident2", "outsider", "superuser"])
def test_accounts_without_a_game_role_are_refused_whatever_their_flags_L_STAFF_5(demo, persona):
    client = staff_client(getattr(demo, persona))
    for url in ["/staff/", *CHANGELIST.values(), "/staff/cities/game/", "/staff/login/"]:
        response = client.get(url, follow=True)
        assert response.status_code == 403, (persona, url)
        body = response.content.decode()
        assert STAFF_NAMES["consigliere"] not in body
        assert "data-fact" not in body
        for inbox in Inbox.objects.filter(game=demo.game, kind__in=[LepraInboxKind.MAFIA, LepraInboxKind.BAR]):
            assert html.escape(inbox.title) not in body


def test_anonymous_visitors_are_sent_to_the_site_login_and_back(demo):
    client = staff_client(demo.anonymous)
    response = client.get("/staff/inboxes/inbox/", follow=True)
    assert response.redirect_chain[-1] == ("/accounts/login/?next=%2Fstaff%2Finboxes%2Finbox%2F", 302)
    assert response.status_code == 200
    # The login page's "next" must stay on this site.
    response = client.get("/staff/login/?next=https://evil.example.com/")
    assert response["Location"] == "/accounts/login/?next=%2Fstaff%2F"


def test_a_logged_in_staff_member_at_the_login_url_goes_to_the_dashboard(demo):
    response = staff_client(demo.tribune1).get("/staff/login/?next=/staff/inboxes/inbox/")
    assert response.status_code == 302 and response["Location"] == "/staff/inboxes/inbox/"


@pytest.mark.parametrize("persona", STAFF_PERSONAS)
def test_dashboard_lists_the_users_own_roles_and_scoped_links(demo, persona):
    body = staff_client(getattr(demo, persona)).get("/staff/").content.decode()
    roles = re.findall(r'<tr data-role="([^"]+)">', body)
    assert roles == [persona.rstrip("12")]
    assert f'href="/staff/inboxes/inbox/?game__slug__exact={demo.game.slug}"' in body
    assert f'href="/staff/cities/resident/?game__slug__exact={demo.game.slug}"' in body
    # The dashboard names no other staff member.
    others = [name for key, name in STAFF_NAMES.items() if key != persona]
    assert not any(name in body for name in others)


def test_the_game_page_links_staff_and_only_staff_to_the_console(demo):
    for persona in PERSONA_NAMES:
        body = staff_client(getattr(demo, persona)).get(f"/games/{demo.game.slug}/").content.decode()
        assert ('href="/staff/"' in body) == (persona in STAFF_PERSONAS), persona


# --------------------------------------------------------------------------------------------------------------
# The exact scope of each changelist (L-INBOX-20, L-STAFF-2)
# --------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("persona", STAFF_PERSONAS)
def test_changelists_show_exactly_the_policy_scope_L_INBOX_20(demo, persona):
    client = staff_client(getattr(demo, persona))
    inbox_ids = readable_inbox_ids(demo, persona)
    labels = {i.pk: label(i) for i in Inbox.objects.filter(game=demo.game).select_related("city", "resident")}

    assert {labels[pk] for pk in listed_ids(client, "inbox")} == expected_access(demo)[persona][0]
    assert set(listed_ids(client, "resident")) == expected_residents(demo, persona)
    assert set(listed_ids(client, "membership")) == set(
        Membership.objects.filter(inbox__in=inbox_ids).values_list("pk", flat=True))
    assert set(listed_ids(client, "message")) == set(
        Message.objects.filter(inbox__in=inbox_ids).values_list("pk", flat=True))
    # The dashboard's game filter narrows nothing away.
    assert {labels[pk] for pk in listed_ids(client, "inbox", f"game__slug__exact={demo.game.slug}")} == \
        expected_access(demo)[persona][0]


def test_changelists_are_not_empty_for_staff(demo):
    # Guards the scope test against passing on empty pages: the Tribune of city 1 has 20 residents, 22 inboxes.
    client = staff_client(demo.tribune1)
    assert len(listed_ids(client, "resident")) == 20
    assert len(listed_ids(client, "inbox")) == 22
    assert listed_ids(client, "message")


# --------------------------------------------------------------------------------------------------------------
# The Tribune of city 2 against city 1's objects (L-STAFF-2)
# --------------------------------------------------------------------------------------------------------------

def _city1_objects(demo) -> dict[str, int]:
    city1 = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)
    return {
        "resident": key_of(demo.seat("honest")),
        "inbox": key_of(city1),
        "membership": key_of(Membership.objects.filter(inbox=city1).first()),
        "message": key_of(Message.objects.filter(inbox=city1).first()),
    }


_MISSING: dict[str, str] = {}


def _missing_id(model: str) -> str:
    """A console key naming no object of ``model`` (the same one for the whole test run)."""
    if model not in _MISSING:
        _MISSING[model] = missing_key(MODELS[model])
    return _MISSING[model]


@pytest.mark.parametrize("model", ["resident", "inbox", "membership", "message"])
def test_tribune2_cannot_open_a_city1_object_same_answer_as_a_missing_id_L_STAFF_2(demo, model):
    forbidden = _city1_objects(demo)[model]
    missing = _missing_id(model)
    base = CHANGELIST[model]
    for suffix, method in [("change/", "get"), ("history/", "get"), ("delete/", "get"), ("change/", "post"),
                           ("", "get")]:
        answers = []
        for pk in (forbidden, missing):
            client = staff_client(demo.tribune2)
            response = getattr(client, method)(f"{base}{pk}/{suffix}", follow=True)
            answers.append(_normalized(response, pk))
        assert answers[0] == answers[1], (model, suffix, method)
        assert answers[0][0] in (200, 403)
    # The tribune of city 1 does open them (the ids are real).
    response = staff_client(demo.tribune1).get(f"{base}{forbidden}/change/")
    assert response.status_code == 200


def test_tribune2_cannot_list_filter_search_or_autocomplete_city1(demo):
    client = staff_client(demo.tribune2)
    honest = demo.seat("honest")
    city1 = honest.city
    city1_inbox = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city=city1, rolled_over_at__isnull=True)
    assert listed_ids(client, "resident", f"city__public_id__exact={city1.public_id}") == []
    assert listed_ids(client, "resident", f"q={honest.name}") == []
    assert listed_ids(client, "inbox", f"city__public_id__exact={city1.public_id}") == []
    assert listed_ids(client, "inbox", "q=" + city1_inbox.title) == []
    assert listed_ids(client, "membership", f"inbox={city1_inbox.public_id}") == []
    assert listed_ids(client, "membership", f"q={honest.name}") == []
    assert listed_ids(client, "message", f"inbox={city1_inbox.public_id}") == []
    some_city1_text = Message.objects.filter(inbox=city1_inbox).first().body.split()[0]
    assert not set(listed_ids(client, "message", "q=" + some_city1_text)) & set(
        Message.objects.filter(inbox=city1_inbox).values_list("pk", flat=True))
    # Autocomplete (any source field pointing at a staff-registered model) reads the same scoped querysets.
    for params in ({"app_label": "inboxes", "model_name": "membership", "field_name": "resident", "term": honest.name},
                   {"app_label": "inboxes", "model_name": "membership", "field_name": "inbox", "term": city1_inbox.title}):
        response = client.get("/staff/autocomplete/", params)
        assert response.status_code == 200
        assert json.loads(response.content)["results"] == []
    # While the tribune of city 1 finds them (the searches are real).
    client1 = staff_client(demo.tribune1)
    assert listed_ids(client1, "resident", f"q={honest.name}") == [honest.pk]
    response = client1.get("/staff/autocomplete/", {"app_label": "inboxes", "model_name": "membership",
                                                     "field_name": "resident", "term": honest.name})
    assert [r["id"] for r in json.loads(response.content)["results"]] == [honest.public_id]


@pytest.mark.parametrize("field", [
    "alignment", "alignment__exact", "alignment__in", "is_commissar", "is_commissar__exact", "is_godfather",
    "is_spirit", "lepra_seat__is_commissar", "lepra_seat__is_godfather__exact", "user__id__exact",
    "city__game__staff_roles__kind",
])
def test_secret_fields_cannot_be_filtered_by_url_same_400_for_every_value(demo, field):
    client = staff_client(demo.procurator)
    answers = {(r.status_code, r.content) for value in ("mafia", "honest", "1", "0", "consigliere")
               for r in [client.get(f"/staff/cities/resident/?{field}={value}")]}
    assert len(answers) == 1
    status, content = answers.pop()
    assert status == 400
    assert b"data-fact" not in content and b"alignment" not in content


@pytest.mark.parametrize("url", [
    "/staff/inboxes/membership/?resident__alignment=mafia",
    "/staff/inboxes/membership/?resident__is_commissar=1",
    "/staff/inboxes/membership/?resident__lepra_seat__is_commissar=1",
    "/staff/inboxes/inbox/?kind=mafia",
    "/staff/inboxes/inbox/?memberships__resident__alignment=mafia",
    "/staff/inboxes/message/?inbox__kind=mafia",
    "/staff/inboxes/message/?author_resident__alignment=mafia",
    "/staff/cities/resident/?_to_field=alignment&_popup=1",
])
def test_lookups_outside_the_whitelist_are_refused(demo, url):
    assert staff_client(demo.procurator).get(url).status_code == 400


def test_ordering_by_any_column_index_never_sorts_by_a_secret(demo):
    client = staff_client(demo.consigliere)  # the one viewer who sees the computed secret columns
    default = listed_ids(client, "resident")
    assert len(default) == 60
    # list_display: name, city, status, position, alignment (4), role (5): the computed columns do not sort.
    for o in ("4", "-4", "5", "-5", "4.5", "-5.-4"):
        assert listed_ids(client, "resident", f"o={o}") == default, o
    for o in ("0", "-0", "1", "2", "3", "-3", "9", "x"):
        assert sorted(listed_ids(client, "resident", f"o={o}")) == sorted(default), o
    # And the header of a computed column offers no sort link.
    body = client.get(CHANGELIST["resident"]).content.decode()
    assert "?o=4" not in body and "?o=5" not in body and "?o=-4" not in body


def test_preserved_changelist_filters_reveal_nothing(demo):
    client = staff_client(demo.procurator)
    mafioso = demo.seat("mafioso")
    response = client.get(f"/staff/cities/resident/{mafioso.public_id}/change/?_changelist_filters=alignment%3Dmafia")
    assert response.status_code == 200
    assert FACT.findall(response.content.decode()) == []


def test_view_on_site_redirect_is_not_mounted(demo):
    from django.contrib.contenttypes.models import ContentType

    ct = ContentType.objects.get_for_model(Inbox)
    mafia1 = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.MAFIA, city__number=1)
    client = staff_client(demo.tribune2)
    assert client.get(f"/staff/r/{ct.pk}/{mafia1.pk}/").status_code == 404
    assert client.get(f"/staff/r/{ct.pk}/{_missing_id('inbox')}/").status_code == 404


def test_nothing_can_be_added_changed_or_deleted_from_the_admin(demo):
    client = staff_client(demo.procurator)
    city1 = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.CITY, city__number=1, rolled_over_at__isnull=True)
    assert client.get("/staff/inboxes/inbox/add/").status_code == 403
    assert client.post(f"/staff/inboxes/inbox/{city1.public_id}/change/", {"title": "x"}).status_code == 403
    assert client.post(f"/staff/inboxes/inbox/{city1.public_id}/delete/", {"post": "yes"}).status_code == 403
    # delete_selected is disabled site-wide: not offered, and posting it is "No action selected.".
    for changelist in CHANGELIST.values():
        assert 'value="delete_selected"' not in client.get(changelist).content.decode()
    response = client.post("/staff/inboxes/inbox/", {"action": "delete_selected", "_selected_action": [city1.public_id]},
                           follow=True)
    assert flashed(response) == ["Действие не выбрано."]
    assert Inbox.objects.filter(pk=city1.pk, title=city1.title, killed_at__isnull=True).exists()


# --------------------------------------------------------------------------------------------------------------
# Secrets: alignments, commissars, godfathers, the mafia's inboxes (L-STAFF-6)
# --------------------------------------------------------------------------------------------------------------

def test_computed_columns_fail_closed_outside_a_request(demo):
    # The ModelAdmin is shared by every thread: the viewer comes from the request being served, never from state
    # left on the instance. With no request, no secret is shown to anyone.
    from staff.console import staff_admin_site

    resident_admin = staff_admin_site._registry[Resident]
    for resident in Resident.objects.filter(game=demo.game, alignment="mafia").select_related("game"):
        assert resident_admin.alignment_known(resident) == ""
        assert resident_admin.roles_known(resident) == ""


def test_only_the_consigliere_sees_alignments_in_the_resident_list_L_STAFF_4(demo):
    mafia_count = Resident.objects.filter(game=demo.game, alignment="mafia").count()
    assert mafia_count == 12
    for persona in STAFF_PERSONAS:
        body = staff_client(getattr(demo, persona)).get(CHANGELIST["resident"] + "?all=").content.decode()
        facts = FACT.findall(body)
        if persona == "consigliere":
            assert facts.count("alignment:mafia") == mafia_count
            assert facts.count("alignment:honest") == 60 - mafia_count
            assert facts.count("godfather") == 3
            assert "commissar" not in facts
        else:
            assert not [f for f in facts if f.startswith("alignment:") or f == "godfather"], persona


def test_procurator_sees_commissars_but_no_alignment_and_no_mafia_inbox_L_STAFF_1(demo):
    client = staff_client(demo.procurator)
    body = client.get(CHANGELIST["resident"] + "?all=").content.decode()
    assert FACT.findall(body).count("commissar") == 3
    assert "alignment:" not in body
    everything = "".join(client.get(CHANGELIST[m] + "?all=").content.decode() for m in CHANGELIST)
    for mafia in Inbox.objects.filter(game=demo.game, kind=LepraInboxKind.MAFIA):
        assert html.escape(mafia.title) not in everything
        for message in Message.objects.filter(inbox=mafia):
            assert html.escape(message.body) not in everything
    mafia1 = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.MAFIA, city__number=1)
    assert _normalized(client.get(f"/staff/inboxes/inbox/{mafia1.public_id}/change/", follow=True),
                       mafia1.public_id) == \
        _normalized(client.get(f"/staff/inboxes/inbox/{_missing_id('inbox')}/change/", follow=True),
                    _missing_id("inbox"))


def test_a_hidden_message_text_is_shown_and_searched_only_for_moderators_L_INBOX_21(demo):
    # The Arbiter reads the court and the office; the office is run by the Procurator.
    office = Inbox.objects.get(game=demo.game, kind=LepraInboxKind.OFFICE)
    message = Message.objects.filter(inbox=office).first()
    assert message is not None
    Message.objects.filter(pk=message.pk).update(is_hidden=True)
    word = max(message.body.split(), key=len)
    arbiter, procurator = staff_client(demo.arbiter), staff_client(demo.procurator)
    arbiter_page = arbiter.get(f"/staff/inboxes/message/{message.public_id}/change/").content.decode()
    assert "(скрыто модератором)" in arbiter_page and html.escape(message.body) not in arbiter_page
    assert message.pk not in listed_ids(arbiter, "message", "q=" + word)
    assert html.escape(message.body).split("\n")[0] in procurator.get(
        f"/staff/inboxes/message/{message.public_id}/change/").content.decode()
    assert message.pk in listed_ids(procurator, "message", "q=" + word)


# --------------------------------------------------------------------------------------------------------------
# Moderation actions call the services (L-INBOX-17, L-INBOX-18; DESIGN.md "Views, admin ... are thin")
# --------------------------------------------------------------------------------------------------------------

def _act(client: Client, action: str, memberships, *, submit: bool = False, **extra):
    """POST the action, confirmed, from the changelist (or with ``submit`` its intermediate page's form to the
    action's own URL); follow the redirect back to the changelist, which shows (and consumes) the messages."""
    return post_console_action(client, CHANGELIST["membership"], action, [m.public_id for m in memberships],
                               submit=submit, confirmed="yes", **extra)


def _city1_membership(demo, persona="honest") -> Membership:
    return Membership.objects.select_related("inbox", "resident").get(
        inbox__game=demo.game, inbox__kind=LepraInboxKind.CITY, inbox__city__number=1, resident=demo.seat(persona))


def test_ban_and_unban_through_the_services_with_audit_rows_L_INBOX_17(demo):
    client = staff_client(demo.tribune1)
    membership = _city1_membership(demo)
    name, title = membership.resident.name, membership.inbox.title
    events = GameEvent.objects.filter(game=demo.game)
    before = events.count()

    # The action first asks for the end and the reason on an intermediate page.
    response = _act(client, "ban_members", [membership])
    assert response.status_code == 200
    assert name in response.content.decode() and 'name="until"' in response.content.decode()
    # ... which posts the selection back by public id (a database id would name no membership of the scope).
    assert re.findall(r'name="_selected_action" value="([^"]+)"', response.content.decode()) == [membership.public_id]
    membership.refresh_from_db()
    assert membership.state == MembershipState.MEMBER

    response = _act(client, "ban_members", [membership], submit=True, until="", reason="flood")
    assert response.redirect_chain == [(CHANGELIST["membership"], 302)]
    assert flashed(response) == [f"Участник {name} забанен в ящике «{title}»."]
    membership.refresh_from_db()
    assert (membership.state, membership.banned_until, membership.reason) == (MembershipState.BANNED, None, "flood")
    event = events.order_by("-id").first()
    assert (event.kind, event.actor_id, event.payload["resident"]) == ("membership.banned", demo.tribune1.pk,
                                                                         membership.resident_id)

    response = _act(client, "unban_members", [membership])
    assert flashed(response) == [f"Участник {name} снова может писать в ящик «{title}»."]
    membership.refresh_from_db()
    assert membership.state == MembershipState.MEMBER
    assert events.order_by("-id").first().kind == "membership.unbanned"
    assert events.count() == before + 2

    # A refusal is the service's own message, and changes nothing.
    response = _act(client, "unban_members", [membership])
    assert flashed(response) == [f"Участник {name} здесь не забанен."]
    assert events.count() == before + 2


def test_the_ban_page_posts_its_form_to_the_actions_own_url_as_a_browser_does_L_INBOX_18(demo):
    """The intermediate page names no action: its form posts the selection (public ids, as the changelist's) and
    the ban's fields to the action's own URL, which takes POST only; a malformed end is the form's 400 and bans
    nobody; an empty selection changes nothing and says so."""
    client = staff_client(demo.tribune1)
    membership = _city1_membership(demo)
    page = _act(client, "ban_members", [membership]).content.decode()  # from the changelist's action menu
    form = re.search(r'<form method="post" action="([^"]+)" novalidate>(.*?)</form>', page, re.DOTALL)
    url = CHANGELIST["membership"] + "actions/ban_members/"
    assert form.group(1) == url and 'name="action"' not in form.group(2) and 'name="apply"' not in form.group(2)
    selection = re.findall(r'<input type="hidden" name="_selected_action" value="([^"]+)">', form.group(2))
    assert selection == [membership.public_id]
    assert client.get(url).status_code == 405
    events = GameEvent.objects.filter(game=demo.game)
    before = events.count()

    bad = client.post(url, {"_selected_action": selection, "until": "tomorrow", "reason": "flood"})
    assert bad.status_code == 400 and 'class="errorlist' in bad.content.decode()
    membership.refresh_from_db()
    assert membership.state == MembershipState.MEMBER and events.count() == before

    nothing = client.post(url, {"until": "", "reason": "flood"}, follow=True)
    assert nothing.redirect_chain == [(CHANGELIST["membership"], 302)]
    assert flashed(nothing) == [("Чтобы произвести действия над объектами, необходимо их выбрать. Объекты не были "
                                 "изменены.")]
    assert events.count() == before

    done = client.post(url, {"_selected_action": selection, "until": "", "reason": "flood"}, follow=True)
    assert done.redirect_chain == [(CHANGELIST["membership"], 302)]
    assert flashed(done) == [f"Участник {membership.resident.name} забанен в ящике «{membership.inbox.title}»."]
    membership.refresh_from_db()
    assert (membership.state, membership.reason) == (MembershipState.BANNED, "flood")
    assert events.count() == before + 1


def test_ban_with_an_end_time_in_the_games_zone_L_INBOX_18(demo):
    client = staff_client(demo.tribune1)
    membership = _city1_membership(demo)
    end_local = (datetime.now(UTC) + timedelta(days=2)).astimezone(ZoneInfo(demo.game.time_zone)).replace(
        second=0, microsecond=0, tzinfo=None)
    response = _act(client, "ban_members", [membership], submit=True, until=end_local.strftime("%Y-%m-%dT%H:%M"))
    assert response.redirect_chain == [(CHANGELIST["membership"], 302)]
    membership.refresh_from_db()
    assert membership.banned_until == end_local.replace(tzinfo=ZoneInfo(demo.game.time_zone)).astimezone(UTC)
    assert GameEvent.objects.filter(game=demo.game, kind="membership.banned").order_by("-id").first().payload[
        "until"] == membership.banned_until.isoformat()
    # A past end is refused by the service, with its message.
    other = _city1_membership(demo, "mafioso")
    response = _act(client, "ban_members", [other], submit=True, until="2020-01-01T10:00")
    assert flashed(response) == ["Окончание бана должно быть в будущем."]
    other.refresh_from_db()
    assert other.state == MembershipState.MEMBER


def test_remove_and_add_back_through_the_services(demo):
    client = staff_client(demo.procurator)
    membership = _city1_membership(demo)
    name, title = membership.resident.name, membership.inbox.title
    response = _act(client, "remove_members", [membership])
    assert flashed(response) == [f"Участник {name} удалён из ящика «{title}»."]
    membership.refresh_from_db()
    assert membership.state == MembershipState.REMOVED
    response = _act(client, "add_back_members", [membership])
    assert flashed(response) == [f"Участник {name} снова в ящике «{title}»."]
    membership.refresh_from_db()
    assert membership.state == MembershipState.MEMBER
    kinds = list(GameEvent.objects.filter(game=demo.game, actor=demo.procurator).order_by("-id")
                 .values_list("kind", flat=True)[:2])
    assert kinds == ["membership.added", "membership.removed"]
    response = _act(client, "add_back_members", [membership])
    assert flashed(response) == [f"{name} уже в этом ящике."]


def test_an_action_on_an_object_outside_the_scope_does_nothing(demo):
    membership = _city1_membership(demo)
    before = GameEvent.objects.count()
    client = staff_client(demo.tribune2)
    response = _act(client, "remove_members", [membership])
    assert response.redirect_chain == [(CHANGELIST["membership"], 302)]
    assert flashed(response) == [nothing_found()]  # the same as for an id that does not exist
    missing = Membership(pk=_missing_id("membership"))
    assert flashed(_act(client, "remove_members", [missing])) == [nothing_found()]
    membership.refresh_from_db()
    assert membership.state == MembershipState.MEMBER
    assert GameEvent.objects.count() == before


def test_the_arbiter_moderates_his_court_and_nothing_outside_his_scope_L_STAFF_3(demo):
    court = Membership.objects.select_related("inbox", "resident").filter(
        inbox__game=demo.game, inbox__kind=LepraInboxKind.COURT).first()
    response = _act(staff_client(demo.arbiter), "ban_members", [court], submit=True)
    assert flashed(response) == [f"Участник {court.resident.name} забанен в ящике «{court.inbox.title}»."]
    court.refresh_from_db()
    assert court.state == MembershipState.BANNED
    # The judge of city 1 is also in city 1's square, run by Tribune 1, which the Arbiter does not read.
    city1 = _city1_membership(demo, "judge")
    assert flashed(_act(staff_client(demo.arbiter), "ban_members", [city1], submit=True)) == [nothing_found()]
    city1.refresh_from_db()
    assert city1.state == MembershipState.MEMBER


def test_service_refusals_reach_the_admin_in_the_users_language(demo):
    # The admin follows the browser's language (LocaleMiddleware; Russian by default): the service's message is
    # shown as translated, unchanged.
    client = Client()
    client.force_login(demo.tribune1)
    membership = _city1_membership(demo)
    response = client.post(CHANGELIST["membership"], {"action": "unban_members", "_selected_action": [membership.public_id]},
                           follow=True)
    assert flashed(response) == [f"Участник {membership.resident.name} здесь не забанен."]


# --------------------------------------------------------------------------------------------------------------
# The leak sweep over every /staff/ page (L-STAFF-6, L-INBOX-17, L-INBOX-20)
# --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("persona", PERSONA_NAMES)
def test_staff_pages_leak_nothing_L_STAFF_6(demo, demo_pages, persona):
    pages = demo_pages.staff(persona)
    everything = without_kind_filter_choices("\n".join(pages.values()))
    allowed_read, _ = expected_access(demo)[persona]
    is_staff = persona in STAFF_PERSONAS
    assert bool(pages) == is_staff
    if is_staff:
        assert len(pages) > 20

    # Who the Consigliere is: the Procurator and the Consigliere (no mafia enters the staff site).
    assert (STAFF_NAMES["consigliere"] in everything) <= (persona in ("procurator", "consigliere"))

    # Alignment markers: only the Consigliere's pages carry any.
    assert any("alignment:" in f for f in FACT.findall(everything)) == (persona == "consigliere")
    # Each resident page shows exactly the facts of the knowledge matrix for this persona.
    names = dict(Resident.objects.filter(game=demo.game).values_list("public_id", "name"))
    facts = set()
    for url, body in pages.items():
        m = re.fullmatch(r"/staff/cities/resident/([a-z0-9]+)/change/", url)
        if m:
            facts |= {(names[m.group(1)], fact) for fact in FACT.findall(body)}
    assert facts == (expected_facts(demo, persona) if is_staff else set())
    if is_staff:
        assert len([u for u in pages if u.startswith("/staff/cities/resident/") and u.endswith("/change/")]) == \
            len(expected_residents(demo, persona))

    # No title or message text of an inbox the persona may not read.
    inboxes = list(Inbox.objects.filter(game=demo.game).select_related("city", "resident"))
    readable = [i for i in inboxes if label(i) in allowed_read]
    allowed_lines = {line.strip() for m in Message.objects.filter(inbox__in=readable) for line in m.body.splitlines()}
    for inbox in inboxes:
        if inbox in readable:
            continue
        assert html.escape(inbox.title) not in everything, (persona, inbox.title)
        for message in Message.objects.filter(inbox=inbox):
            assert message.body_html not in everything, (persona, label(inbox))
            for line in message.body.splitlines():
                line = line.strip()
                if len(line) >= 12 and line not in allowed_lines:
                    assert html.escape(line) not in everything, (persona, label(inbox), line[:60])


# --------------------------------------------------------------------------------------------------------------
# Staff of one game, player of another; query budgets
# --------------------------------------------------------------------------------------------------------------

def test_a_player_who_is_staff_elsewhere_sees_nothing_of_the_game_he_plays_L_STAFF_5(demo):
    from cities.models import Game, StaffRole

    other = Game.objects.create(slug="other-game", title="Another game")
    StaffRole.objects.create(game=other, kind="procurator", user=demo.honest)
    client = staff_client(demo.honest)
    body = client.get("/staff/").content.decode()
    assert re.findall(r'<tr data-role="([^"]+)">', body) == ["procurator"]
    assert "Another game" in body and html.escape(demo.game.title) not in body
    # He reads his city's square and his personal inbox as a resident, but the staff site shows only the game
    # he hosts: nothing of the demo game.
    for model in CHANGELIST:
        assert listed_ids(client, model) == [], model
    city1 = _city1_objects(demo)
    assert _normalized(client.get(f"/staff/inboxes/inbox/{city1['inbox']}/change/", follow=True), city1["inbox"]) == \
        _normalized(client.get(f"/staff/inboxes/inbox/{_missing_id('inbox')}/change/", follow=True),
                    _missing_id("inbox"))


@pytest.mark.parametrize("model", list(CHANGELIST))
def test_changelists_take_a_constant_number_of_queries(demo, model, django_assert_max_num_queries):
    client = staff_client(demo.consigliere if model != "membership" else demo.procurator)
    client.get(CHANGELIST[model] + "?all=")  # warm up (content types, sessions)
    with django_assert_max_num_queries(14):
        assert client.get(CHANGELIST[model] + "?all=").status_code == 200
