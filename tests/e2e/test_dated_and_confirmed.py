"""In a real browser: the irreversible actions of a resident take a second step (leaving a secret inbox, consenting
to its disclosure), and a dead member's open secret thread stops at the death (L-STAFF-6 [interp]): a post made
after it never appears there by the live poll, while the living member's open page shows it without reloading."""
from __future__ import annotations

from datetime import timedelta

import pytest

from archive.models import DisclosureConsent
from inboxes import membership_services, posting
from inboxes import services as inbox_services
from rulesets.lepra.inbox_services import do_open_game_inboxes
from inboxes.models import Membership, MembershipState
from rulesets.lepra.kinds import LepraInboxKind

from .stack import LIVE_POLL_SECONDS

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

#: How long a page may take to show news: two poll intervals and the request.
WAIT_MS = (2 * LIVE_POLL_SECONDS + 5) * 1000


def _secret_of_three(lepra):
    lepra.set_up_with_services()
    do_open_game_inboxes(lepra.game(), acting_user=None, now=lepra.stack.clock.now())
    first, second, third = lepra.residents(1)[:3]
    inbox = inbox_services.do_create_secret_inbox(lepra.game(), title="Заговор троих", members=[second, third],
                                                  acting_user=first.user, now=lepra.stack.clock.now())
    return inbox, first, second, third


def test_leaving_and_consenting_ask_first_in_the_browser_L_INBOX_13_L_ARCH_2(lepra):
    inbox, _first, second, _third = _secret_of_three(lepra)
    member = lepra.of(second)
    member.open(f"/inboxes/{inbox.public_id}/")
    member.submit("form.leave-form button[type=submit]")
    assert member.page.locator("form.confirm-form").count() == 1  # the second step, nothing changed yet
    assert Membership.objects.get(inbox=inbox, resident=second).state == MembershipState.MEMBER
    member.submit("section.confirm a.cancel")  # cancel: back to the thread, still a member
    assert Membership.objects.get(inbox=inbox, resident=second).state == MembershipState.MEMBER

    personal = lepra.inbox(LepraInboxKind.PERSONAL, resident=second)
    member.open("/me/consents/")
    member.submit(f"form.give-consent:has(input[value='{personal.public_id}']) button")
    assert member.page.locator("form.confirm-form").count() == 1
    assert not DisclosureConsent.objects.filter(inbox=personal).exists()
    member.submit("form.confirm-form button[type=submit]")
    assert DisclosureConsent.objects.filter(inbox=personal, revoked_at__isnull=True).count() == 1

    member.open(f"/inboxes/{inbox.public_id}/")
    member.submit("form.leave-form button[type=submit]")
    member.submit("form.confirm-form button[type=submit]")
    assert Membership.objects.get(inbox=inbox, resident=second).state == MembershipState.REMOVED


def test_a_dead_members_open_secret_thread_shows_nothing_posted_after_the_death_L_STAFF_6(lepra):
    inbox, first, second, third = _secret_of_three(lepra)
    posting.do_post_message(inbox, "Сказано при жизни.", acting_user=first.user, now=lepra.stack.clock.now())
    dead, living = lepra.of(second), lepra.of(third)
    thread = f"/inboxes/{inbox.public_id}/"
    dead.open(thread)
    living.open(thread)
    death = lepra.stack.clock.now()
    membership_services.do_kill_resident(second, "killed", acting_user=None, now=death)
    posting.do_post_message(inbox, "Сказано после смерти.", acting_user=first.user,
                                   now=death + timedelta(seconds=1))
    living.page.locator("article.message", has_text="Сказано после смерти.").wait_for(timeout=WAIT_MS)
    dead.page.wait_for_timeout(WAIT_MS)  # two polls of his open page
    assert dead.page.locator("article.message", has_text="Сказано при жизни.").count() == 1
    assert dead.page.locator("article.message", has_text="Сказано после смерти.").count() == 0
    dead.open(thread)  # and not on a reload either
    assert "Сказано после смерти." not in dead.text("main")
