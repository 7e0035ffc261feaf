"""The operators' /admin/ tells no game secret (L-STAFF-5): no per-game list of sign-ups or staff while a game runs
(the one account neither listed as a player nor as a host would be the Consigliere), and no operator sets another
account's password or e-mail (he could log in as a player), refused alike for every account so that the refusal
itself tells nothing of who plays."""
from __future__ import annotations

import re

from allauth.account.admin import EmailAddressAdmin, EmailConfirmationAdmin
from allauth.account.models import EmailAddress, EmailConfirmation
from django.contrib import admin
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse

from cities.models import Signup, StaffRole
from mafia_site.operator_admin import CREDENTIAL_MODELS_NOT_ADMINISTERED, OperatorAdminSite
from rulesets.lepra.staff_kinds import StaffKind

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


def test_an_operator_adds_no_e_mail_address_to_another_account_L_STAFF_5(demo):
    """allauth's EmailAddress admin: adding a verified address to the Procurator's account would let the operator
    reset its password to his own mailbox and log in as the Procurator."""
    client = operator(demo)
    before = list(EmailAddress.objects.filter(user=demo.procurator).values_list("email", "verified"))
    response = client.post("/admin/account/emailaddress/add/", {
        "user": demo.procurator.pk, "email": "attacker@evil.example", "verified": "on", "primary": "on"})
    assert response.status_code == 403
    assert not EmailAddress.objects.filter(email="attacker@evil.example").exists()
    assert list(EmailAddress.objects.filter(user=demo.procurator).values_list("email", "verified")) == before


def test_an_operator_changes_verifies_or_deletes_no_e_mail_address_L_STAFF_5(demo):
    client = operator(demo)
    address = EmailAddress.objects.get(user=demo.consigliere)
    EmailAddress.objects.filter(pk=address.pk).update(email="cons@example.com", verified=False)
    response = client.post(f"/admin/account/emailaddress/{address.pk}/change/", {
        "user": demo.consigliere.pk, "email": "attacker@evil.example", "verified": "on", "primary": "on"})
    assert response.status_code == 403
    response = client.post(f"/admin/account/emailaddress/{address.pk}/delete/", {"post": "yes"})
    assert response.status_code == 403
    response = client.post("/admin/account/emailaddress/", {
        "action": "make_verified", "_selected_action": [address.pk], "index": "0"})
    assert response.status_code == 200  # the list again, with "no action selected": allauth's action is gone
    address.refresh_from_db()
    assert (address.email, address.verified, address.user_id) == ("cons@example.com", False, demo.consigliere.pk)
    # The operator still sees the addresses, read-only.
    page = client.get(f"/admin/account/emailaddress/{address.pk}/change/")
    assert page.status_code == 200
    assert 'name="email"' not in page.content.decode()
    assert 'value="make_verified"' not in client.get("/admin/account/emailaddress/").content.decode()


def test_the_operators_admin_registers_no_credential_secret_and_no_writable_credential_L_STAFF_5(rf, demo):
    """Whatever allauth registers (the confirmation keys when not HMAC, social logins and tokens when installed)
    is not administered or view-only on the operators' site."""
    site = OperatorAdminSite(name="probe")
    site.register(EmailConfirmation, EmailConfirmationAdmin)
    site.register(EmailAddress, EmailAddressAdmin)
    assert EmailConfirmation not in site._registry
    request = rf.get("/admin/")
    request.user = demo.superuser
    model_admin = site._registry[EmailAddress]
    assert (model_admin.has_add_permission(request), model_admin.has_change_permission(request),
            model_admin.has_delete_permission(request), model_admin.get_actions(request)) == (False, False, False, {})
    assert model_admin.has_view_permission(request)
    assert EmailConfirmation not in admin.site._registry
    assert {m._meta.label for m in admin.site._registry}.isdisjoint(CREDENTIAL_MODELS_NOT_ADMINISTERED)


def test_a_password_reset_after_a_refused_address_reaches_no_operator_mailbox_L_STAFF_5(demo, mailoutbox):
    client = operator(demo)
    client.post("/admin/account/emailaddress/add/", {
        "user": demo.procurator.pk, "email": "attacker@evil.example", "verified": "on", "primary": "on"})
    Client().post(reverse("account_reset_password"), {"email": "attacker@evil.example"})
    assert [m.to for m in mailoutbox if "attacker@evil.example" in m.to and demo.procurator.username in m.body] == []


def test_the_operators_admin_links_an_objects_history_by_its_database_id_as_it_opens_it(demo):
    """The admin templates shared with the staff console (which names objects by public id or slug) keep the
    operators' admin's own key: a city with a public id opens and links its history by its database id."""
    city = demo.seat("honest").city
    client = operator(demo)
    page = client.get(f"/admin/cities/city/{city.pk}/change/")
    assert page.status_code == 200
    assert f'href="/admin/cities/city/{city.pk}/history/"' in page.content.decode()
    history = client.get(f"/admin/cities/city/{city.pk}/history/")
    assert history.status_code == 200
    assert f'href="/admin/cities/city/{city.pk}/change/"' in history.content.decode()
