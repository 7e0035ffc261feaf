"""No confidence in the Supreme Arbiter or the Consigliere (RULES.md L-IMPEACH-3): the complaint inboxes, their
members and after-game disclosure, the Procurator's ruling and its consequences, the audit rows."""
from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.core import mail

from cities.models import Alignment, GameEvent, GameStatus, LifeStatus, Resident
from inboxes import audit_policy, knowledge, policies
from inboxes.membership_services import do_kill_resident
from inboxes.models import Membership, MembershipState, Message
from inboxes.posting import do_post_message
from kernel.errors import InvalidInput, NotAllowed, WrongState
from rulesets.lepra import no_confidence_services as services
from rulesets.lepra.kinds import LepraInboxKind
from rulesets.lepra.models import NoConfidenceCase, NoConfidenceRuling, NoConfidenceTarget
from tests.admin_keys import action_url
from tests.conftest import fresh
from tests.staff.conftest import NOW
from tests.support.staff_console import staff_client


def city1_mafia(demo) -> list[Resident]:
    return list(Resident.objects.filter(game=demo.game, city__number=1, alignment=Alignment.MAFIA,
                                        status=LifeStatus.ALIVE).order_by("pk"))


def _readers(inbox) -> set[str]:
    return set(policies.readers_of_inbox(inbox).values_list("username", flat=True))


def test_a_residents_complaint_about_the_arbiter_reaches_the_procurator_only_L_IMPEACH_3(
        demo, django_capture_on_commit_callbacks):
    honest = demo.seat("honest")
    with django_capture_on_commit_callbacks(execute=True):
        case = services.do_file_no_confidence_in_arbiter(demo.game, "Арбитр третий день молчит.",
                                                         acting_user=demo.honest, now=NOW)
    assert (case.target, case.complainant_id, case.city_id, case.ruling) == ("arbiter", honest.pk, honest.city_id, "")
    inbox = case.inbox
    assert inbox.kind == LepraInboxKind.COMPLAINT
    assert list(Membership.objects.filter(inbox=inbox).values_list("resident_id", "state")) == [
        (honest.pk, MembershipState.MEMBER)]
    assert _readers(inbox) == {demo.honest.username, demo.procurator.username}
    for persona in ("arbiter", "consigliere", "tribune1", "mafioso", "resident2", "anonymous"):
        assert not policies.can_read_inbox(fresh(getattr(demo, persona)), inbox), persona
    first = Message.objects.get(inbox=inbox)
    assert (first.author_resident_id, first.body) == (honest.pk, "Арбитр третий день молчит.")
    # The Procurator answers there; the resident writes again.
    do_post_message(inbox, "Приложите ссылки.", acting_user=fresh(demo.procurator), now=NOW + timedelta(minutes=1))
    do_post_message(inbox, "Вот ссылки.", acting_user=fresh(demo.honest), now=NOW + timedelta(minutes=2))
    assert Message.objects.filter(inbox=inbox).count() == 3
    event = GameEvent.objects.get(game=demo.game, kind="no_confidence.filed")
    assert (event.actor_id, event.payload["case"], event.payload["resident"]) == (demo.honest.pk, case.pk, honest.pk)
    assert [m.to for m in mail.outbox] == [[demo.procurator.email]]
    # One open complaint per resident.
    with pytest.raises(WrongState):
        services.do_file_no_confidence_in_arbiter(demo.game, "Ещё раз.", acting_user=fresh(demo.honest), now=NOW)
    with pytest.raises(InvalidInput):
        services.do_file_no_confidence_in_arbiter(demo.game, "   ", acting_user=fresh(demo.resident2), now=NOW)
    with pytest.raises(NotAllowed):
        services.do_file_no_confidence_in_arbiter(demo.game, "Я арбитр.", acting_user=fresh(demo.arbiter), now=NOW)
    assert NoConfidenceCase.objects.count() == 1


def test_a_dead_resident_cannot_complain_L_IMPEACH_3(demo):
    seat = demo.seat("resident2")
    do_kill_resident(seat, "killed", acting_user=None, now=NOW)
    with pytest.raises(NotAllowed):
        services.do_file_no_confidence_in_arbiter(demo.game, "Жалоба", acting_user=fresh(demo.resident2), now=NOW)


def test_the_mafias_complaint_is_signed_by_their_city_and_names_nobody_L_IMPEACH_3(demo):
    mafia = city1_mafia(demo)
    assert len(mafia) == 4
    city = mafia[0].city
    case = services.do_file_no_confidence_in_consigliere(demo.game, "Консильери не передаёт наши решения.",
                                                         acting_user=demo.mafioso, now=NOW)
    assert (case.target, case.complainant_id, case.city_id) == ("consigliere", None, city.pk)
    inbox = case.inbox
    assert inbox.kind == LepraInboxKind.MAFIA_COMPLAINT
    # The city's living mafia read it (read-only: they write through the complaint page), nobody else of theirs.
    assert set(Membership.objects.filter(inbox=inbox).values_list("resident_id", "state")) == {
        (r.pk, MembershipState.BANNED) for r in mafia}
    assert _readers(inbox) == {r.user.username for r in mafia} | {demo.procurator.username}
    for persona in ("consigliere", "arbiter", "tribune1", "honest", "commissar", "resident2", "anonymous"):
        assert not policies.can_read_inbox(fresh(getattr(demo, persona)), inbox), persona
    other = next(r for r in mafia if r.user_id != demo.mafioso.pk)
    services.do_write_in_mafia_complaint(case, "И ещё: он груб.", acting_user=other.user, now=NOW + timedelta(seconds=5))
    signed = list(Message.objects.filter(inbox=inbox).order_by("received_at").values_list(
        "author_name", "author_resident_id", "author_user_id", "author_staff_id", "body"))
    assert signed == [("Мафия города Малиновка", None, None, None, "Консильери не передаёт наши решения."),
                      ("Мафия города Малиновка", None, None, None, "И ещё: он груб.")]
    # The Procurator answers in the inbox; the mafia read it; the member list is theirs only.
    procurator = fresh(demo.procurator)
    assert policies.can_post_in_inbox(procurator, inbox, NOW)
    do_post_message(inbox, "Приму к сведению.", acting_user=procurator, now=NOW + timedelta(minutes=1))
    assert policies.can_read_inbox(fresh(other.user), inbox)
    assert not knowledge.can_see_members(fresh(demo.procurator), inbox)
    assert knowledge.can_see_members(fresh(demo.mafioso), inbox)
    assert "complaint page" in policies.post_denial_reason(fresh(demo.mafioso), inbox, NOW) or \
        "странице жалобы" in policies.post_denial_reason(fresh(demo.mafioso), inbox, NOW)
    # Only the living mafia of that city; one open complaint per city (the next message goes into it).
    with pytest.raises(NotAllowed):
        services.do_file_no_confidence_in_consigliere(demo.game, "Мы тоже", acting_user=fresh(demo.honest), now=NOW)
    with pytest.raises(NotAllowed):
        services.do_write_in_mafia_complaint(case, "Мы тоже", acting_user=fresh(demo.honest), now=NOW)
    mafioso2 = Resident.objects.filter(game=demo.game, city__number=2, alignment=Alignment.MAFIA).first()
    with pytest.raises(NotAllowed):
        services.do_write_in_mafia_complaint(case, "Мы из другого города", acting_user=mafioso2.user, now=NOW)
    with pytest.raises(WrongState):
        services.do_file_no_confidence_in_consigliere(demo.game, "Вторая", acting_user=fresh(other.user), now=NOW)
    # A mafioso who dies is removed, as from the mafia inbox.
    do_kill_resident(other, "killed", acting_user=None, now=NOW + timedelta(minutes=2))
    assert Membership.objects.get(inbox=inbox, resident=other).state == MembershipState.REMOVED
    assert not policies.can_read_inbox(fresh(other.user), inbox)


def test_the_audit_rows_of_a_mafia_complaint_have_no_actor_but_for_the_hidden_author_row_L_IMPEACH_3(demo):
    case = services.do_file_no_confidence_in_consigliere(demo.game, "Жалоба", acting_user=demo.mafioso, now=NOW)
    rows = {e.kind: e for e in GameEvent.objects.filter(game=demo.game, kind__startswith="no_confidence.")}
    assert set(rows) == {"no_confidence.filed", "no_confidence.posted", "no_confidence.mafia_author"}
    assert rows["no_confidence.filed"].actor_id is None and rows["no_confidence.posted"].actor_id is None
    assert rows["no_confidence.filed"].payload == {"case": case.pk, "target": "consigliere", "city": case.city_id,
                                                   "inbox": case.inbox_id}
    assert rows["no_confidence.mafia_author"].actor_id == demo.mafioso.pk
    for persona in ("procurator", "tribune1", "arbiter", "consigliere"):
        visible = set(audit_policy.visible_events(fresh(getattr(demo, persona)), demo.game)
                      .filter(kind__startswith="no_confidence.").values_list("kind", flat=True))
        expected = {"no_confidence.filed", "no_confidence.posted"} if persona == "procurator" else set()
        assert visible == expected, persona


@pytest.mark.parametrize("ruling", ["bonus", "unfounded"])
def test_the_procurators_ruling_is_recorded_told_and_closes_the_complaint_L_IMPEACH_3(demo, ruling):
    case = services.do_file_no_confidence_in_consigliere(demo.game, "Жалоба", acting_user=demo.mafioso, now=NOW)
    later = NOW + timedelta(hours=1)
    with pytest.raises(NotAllowed):
        services.do_rule_on_no_confidence(case, ruling, reason="—", acting_user=fresh(demo.consigliere), now=later)
    with pytest.raises(InvalidInput):
        services.do_rule_on_no_confidence(case, ruling, reason=" ", acting_user=fresh(demo.procurator), now=later)
    with pytest.raises(InvalidInput):  # a bonus needs its text; an unfounded complaint gets none
        services.do_rule_on_no_confidence(case, ruling, reason="Так решено",
                                          bonus="" if ruling == "bonus" else "Лишний бонус",
                                          acting_user=fresh(demo.procurator), now=later)
    bonus = "Право задать один вопрос Прокуратору" if ruling == "bonus" else ""
    services.do_rule_on_no_confidence(case, ruling, reason="Так решено", bonus=bonus,
                                      acting_user=fresh(demo.procurator), now=later)
    case.refresh_from_db()
    assert (case.ruling, case.ruled_at, case.reason, case.bonus) == (ruling, later, "Так решено", bonus)
    told = Message.objects.filter(inbox=case.inbox).order_by("-received_at", "-pk").first()
    expected = ("Решение Прокуратора: жалоба обоснована. Бонус: Право задать один вопрос Прокуратору"
                if ruling == "bonus" else "Решение Прокуратора: жалоба необоснованна.")
    assert told.body == expected + "\n\nПричина: Так решено"
    assert told.author_resident_id is None and told.author_user_id is None
    assert case.inbox.killed_at == later
    with pytest.raises(WrongState):
        services.do_write_in_mafia_complaint(case, "Ещё", acting_user=fresh(demo.mafioso), now=later)
    with pytest.raises(WrongState):
        services.do_rule_on_no_confidence(case, "unfounded", reason="x", acting_user=fresh(demo.procurator), now=later)
    event = GameEvent.objects.get(game=demo.game, kind="no_confidence.ruled")
    assert (event.actor_id, event.payload["ruling"], event.payload["bonus"]) == (demo.procurator.pk, ruling, bonus)
    # After a ruling the mafia may file a new complaint.
    again = services.do_file_no_confidence_in_consigliere(demo.game, "Снова", acting_user=fresh(demo.mafioso),
                                                          now=later + timedelta(minutes=1))
    assert again.pk != case.pk


def test_the_procurator_rules_from_the_staff_console_L_IMPEACH_3(demo):
    case = services.do_file_no_confidence_in_arbiter(demo.game, "Жалоба", acting_user=demo.honest, now=NOW)
    client = staff_client(demo.procurator)
    url = "/staff/lepra/noconfidencecase/"
    listing = client.get(url + "?all=").content.decode()
    assert f'{url}{case.public_id}/change/' in listing and demo.seat("honest").name in listing
    page = client.post(url, {"action": "rule_on_no_confidence", "_selected_action": [case.public_id]})
    assert page.status_code == 200 and "reason" in page.content.decode()
    response = client.post(action_url(url, "rule_on_no_confidence"), {
        "_selected_action": [case.public_id], "ruling": NoConfidenceRuling.UNFOUNDED, "reason": "Арбитр действовал по правилам",
        "bonus": ""})
    assert response.status_code == 302
    case.refresh_from_db()
    assert (case.ruling, case.reason) == ("unfounded", "Арбитр действовал по правилам")
    # Nobody else has the console page.
    for persona in ("arbiter", "consigliere", "tribune1"):
        assert staff_client(getattr(demo, persona)).get(url + f"{case.public_id}/change/", follow=True).status_code in (200, 403)
        assert f"{url}{case.public_id}/change/" not in staff_client(getattr(demo, persona)).get(url).content.decode()


def test_residents_page_files_both_kinds_and_refuses_others_L_IMPEACH_3(demo):
    from django.test import Client

    def client_for(user):
        c = Client()
        c.force_login(user)
        return c

    slug = demo.game.slug
    with time_machine.travel(NOW, tick=False):
        mafioso = client_for(demo.mafioso)
        page = mafioso.get(f"/games/{slug}/no-confidence/").content.decode()
        assert "Мафия города Малиновка" in page and f'action="/games/{slug}/no-confidence/consigliere/"' in page
        honest_page = client_for(demo.honest).get(f"/games/{slug}/no-confidence/").content.decode()
        assert "/no-confidence/consigliere/" not in honest_page  # nothing tells an honest resident about the mafia
        assert client_for(demo.procurator).get(f"/games/{slug}/no-confidence/").status_code == 404
        response = mafioso.post(f"/games/{slug}/no-confidence/consigliere/", {"mafia-text": "Консильери плох"})
        assert response.status_code == 302
        response = mafioso.post(f"/games/{slug}/no-confidence/consigliere/", {"mafia-text": "И ещё"})
        assert response.status_code == 302
        case = NoConfidenceCase.objects.get(target=NoConfidenceTarget.CONSIGLIERE)
        assert Message.objects.filter(inbox=case.inbox).count() == 2
        refused = client_for(demo.honest).post(f"/games/{slug}/no-confidence/consigliere/", {"mafia-text": "Я тоже"})
        assert refused.status_code == 403
        response = client_for(demo.honest).post(f"/games/{slug}/no-confidence/arbiter/", {"arbiter-text": "Арбитр"})
        assert response.status_code == 302
        assert NoConfidenceCase.objects.filter(target="arbiter", complainant=demo.seat("honest")).count() == 1
        # The personal inbox links to the page.
        personal = demo.seat("honest").about_inboxes.get(kind="personal", rolled_over_at__isnull=True)
        assert f"/games/{slug}/no-confidence/" in client_for(demo.honest).get(f"/inboxes/{personal.public_id}/").content.decode()


def test_complaints_are_disclosed_after_the_game_L_IMPEACH_3_L_ARCH_1(demo):
    from django.contrib.auth.models import AnonymousUser

    from rulesets.lepra.game_end_services import do_end_game_early

    case = services.do_file_no_confidence_in_consigliere(demo.game, "Жалоба", acting_user=demo.mafioso, now=NOW)
    other = services.do_file_no_confidence_in_arbiter(demo.game, "Жалоба", acting_user=demo.honest, now=NOW)
    assert not policies.can_read_inbox(AnonymousUser(), case.inbox)
    do_end_game_early(demo.game, reason="Конец", acting_user=fresh(demo.procurator), now=NOW + timedelta(hours=1))
    for c in (case, other):
        c.inbox.refresh_from_db()
        c.inbox.game.refresh_from_db()
        assert c.inbox.game.status == GameStatus.FINISHED
        assert policies.is_disclosed(c.inbox)
        assert policies.can_read_inbox(AnonymousUser(), c.inbox)
        assert knowledge.can_see_members(AnonymousUser(), c.inbox)


def test_a_mafioso_posting_in_the_complaint_from_its_page_is_sent_to_the_complaint_page_L_IMPEACH_3(demo):
    # The post's locked read loads the inbox with its game alone: the refusal still names the city.
    from inboxes.posting import do_post_message_by_id

    case = services.do_file_no_confidence_in_consigliere(demo.game, "Консильери не передаёт наши решения.",
                                                         acting_user=demo.mafioso, now=NOW)
    with pytest.raises(NotAllowed) as refused:
        do_post_message_by_id(case.inbox.public_id, "Пишем прямо сюда.", acting_user=fresh(demo.mafioso),
                              now=NOW + timedelta(seconds=5))
    assert refused.value.rule == "L-INBOX-17"
    assert str(refused.value) == ("Пишите Прокуратору на странице жалобы: ваши сообщения подписываются «Мафия "
                                  "города Малиновка».")
    assert list(Message.objects.filter(inbox=case.inbox).values_list("body", flat=True)) == [
        "Консильери не передаёт наши решения."]
