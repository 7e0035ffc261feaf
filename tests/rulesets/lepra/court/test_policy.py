"""The access policy on precincts (L-INBOX-10) and removal demands (L-INBOX-11): exact readers, and the instance,
queryset and audience forms agree for every persona; the Arbiter joins a demand only once it is valid and may then
post there (L-JUDGE-8)."""
from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.models import AnonymousUser

from inboxes import policies
from inboxes.models import Message
from inboxes.posting import do_post_message
from tests.conftest import fresh
from tests.rulesets.lepra.court.judge_helpers import DAY2, demand_with, judge_of, precinct, start


def personas(jg):
    city1, city2 = jg.residents(1), jg.residents(2)
    return {"arbiter": jg.arbiter, "procurator": jg.procurator, "tribune1": jg.tribunes[1],
            "tribune2": jg.tribunes[2], "resident1": city1[1].user, "resident2": city2[1].user,
            "anonymous": AnonymousUser()}


def readers(jg, inbox) -> set[str]:
    """The personas that read ``inbox``, after checking that the three forms of the policy agree."""
    audience = set(policies.readers_of_inbox(inbox).values_list("pk", flat=True))
    out = set()
    for name, user in personas(jg).items():
        user = fresh(user)
        one = policies.can_read_inbox(user, inbox)
        assert one == policies.readable_inboxes(user, jg.game).filter(pk=inbox.pk).exists(), name
        assert one == (getattr(user, "pk", None) in audience), name
        if one:
            out.add(name)
    return out


def test_a_precinct_is_read_by_the_city_residents_the_arbiter_and_the_procurator_L_INBOX_10(jg):
    candidate = jg.residents(1)[0]
    start(jg, 1, [candidate])
    assert readers(jg, precinct(candidate)) == {"arbiter", "procurator", "resident1"}


def test_the_arbiter_joins_a_removal_demand_once_it_is_valid_L_INBOX_11_L_JUDGE_8(jg):
    for n in (1, 2, 3):
        jg.elect(n, jg.residents(n)[0])
    jg.set_day(2, DAY2 - timedelta(hours=1))
    demand, others = demand_with(jg, 1, 3)
    assert judge_of(jg, 1).pk != others[0].pk
    assert readers(jg, demand.inbox) == {"procurator", "resident1"}
    from rulesets.lepra.court.judge_services import do_confirm_removal_demand
    do_confirm_removal_demand(demand, acting_user=others[4].user, now=DAY2 + timedelta(hours=2))
    demand.refresh_from_db()
    assert readers(jg, demand.inbox) == {"arbiter", "procurator", "resident1"}
    message = do_post_message(demand.inbox, "Требование принято.", acting_user=fresh(jg.arbiter),
                              now=DAY2 + timedelta(hours=3))
    assert (message.author_staff.kind, message.author_resident) == ("arbiter", None)
    assert Message.objects.filter(inbox=demand.inbox, author_staff__isnull=False).count() == 1
