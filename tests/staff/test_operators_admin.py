"""The operators' /admin/ tells no game secret (L-STAFF-5): no per-game list of sign-ups or staff while a game runs
(the one account neither listed as a player nor as a host would be the Consigliere), and no operator sets another
account's password or e-mail (he could log in as a player), refused alike for every account so that the refusal
itself tells nothing of who plays."""
from __future__ import annotations

import re

from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse

from cities.models import Signup, StaffKind, StaffRole

REFUSAL = ("An operator does not set another account's password: its owner resets it by e-mail (an operator could "
           "otherwise log in as a player of a running game).")


def operator(demo) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(demo.superuser)
    return client


def test_no_signup_or_staff_list_of_a_running_game_in_the_operators_admin_L_STAFF_5(demo):
    client = operator(demo)
    assert Signup.objects.filter(game=demo.game).exists()
    for model in ("signup", "staffrole"):
        body = client.get(f"/admin/cities/{model}/?all=").content.decode()
        assert not re.findall(rf'href="/admin/cities/{model}/(\d+)/change/', body), model
    role = StaffRole.objects.get(game=demo.game, kind=StaffKind.TRIBUNE, city__number=1)
    assert client.get(f"/admin/cities/staffrole/{role.pk}/change/", follow=True).status_code in (200, 404)
    assert role.user.public_name not in client.get("/admin/cities/staffrole/?all=").content.decode()


def test_an_operator_sets_no_password_of_any_other_account_alike_for_all_L_STAFF_5(demo):
    client = operator(demo)
    consigliere = StaffRole.objects.get(game=demo.game, kind=StaffKind.CONSIGLIERE).user
    answers = []
    for user in (demo.mafioso, consigliere, demo.outsider):
        before = type(user).objects.get(pk=user.pk).password
        url = reverse("admin:auth_user_password_change", args=[user.pk])
        response = client.post(url, {"password1": "n3w-pass-phrase-77", "password2": "n3w-pass-phrase-77",
                                     "usable_password": "true"}, follow=True)
        assert response.status_code == 200
        assert [str(m) for m in get_messages(response.wsgi_request)] == [REFUSAL]
        assert type(user).objects.get(pk=user.pk).password == before
        answers.append(response.redirect_chain[-1][0].replace(f"/{user.pk}/", "/ID/"))
    assert len(set(answers)) == 1
    # The e-mail of another account is read-only (a reset by e-mail would do the same), for every account.
    for user in (demo.mafioso, demo.outsider):
        page = client.get(f"/admin/accounts/user/{user.pk}/change/").content.decode()
        assert 'name="email"' not in page
    own = client.get(f"/admin/accounts/user/{demo.superuser.pk}/change/").content.decode()
    assert 'name="email"' in own
