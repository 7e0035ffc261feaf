"""Every picker is a Django form field (DESIGN.md "Pages": legal choices only, errors inside the form, a label for
every control): the timeline's filters, the nomination page's confrontation request, the night page's pickers and
the setup page's player, city and Tribune city."""
from __future__ import annotations

from django.test import Client
from django.urls import reverse

from rulesets.lepra.models import SpeechRequest


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_timelines_filters_are_labelled_fields_and_a_bad_value_is_their_error(demo):
    url = reverse("archive_timeline", args=[demo.game.slug])
    page = _client(demo.honest).get(url).content.decode()
    assert 'for="id_city"' in page and 'for="id_kind"' in page
    response = _client(demo.honest).get(url + "?city=99&kind=nonsense")
    assert response.status_code == 200  # a filter in error filters nothing; the form says why
    form = response.content.decode().split('class="filters"')[1].split("</form>")[0]
    assert form.count('class="errorlist') == 2


def test_a_confrontation_with_a_resident_the_page_does_not_offer_is_the_forms_error_L_INBOX_19(demo):
    url = reverse("nominate", args=[demo.game.slug])
    page = _client(demo.honest).get(url).content.decode()
    assert 'for="id_other"' in page and 'for="id_note"' in page
    own = demo.seat("honest").public_id
    assert f'<option value="{own}">' not in page.split('class="stacked speech-form"')[1]
    before = SpeechRequest.objects.count()
    response = _client(demo.honest).post(reverse("request_confrontation", args=[demo.game.slug]),
                                         {"other": own, "note": "x"})
    assert response.status_code == 400
    form = response.content.decode().split('class="stacked speech-form"')[1].split("</form>")[0]
    assert 'class="errorlist' in form
    assert SpeechRequest.objects.count() == before


def test_the_night_pages_pickers_are_labelled_with_ids_of_their_own(demo):
    page = _client(demo.consigliere).get(reverse("night_page", args=[demo.game.slug])).content.decode()
    ids = [chunk.split('"')[0] for chunk in page.split(' id="')[1:]]
    assert len(ids) == len(set(ids))  # several pickers share the field name "target", never an element id
    for element_id in (i for i in ids if i.endswith("_target")):
        assert f'for="{element_id}"' in page


def test_the_setup_pages_pickers_are_form_fields_with_labels(db, django_user_model):
    host = django_user_model.objects.create_user("p_host", "p_host@example.com", "x-secret-123", display_name="Host")
    client = _client(host)
    client.post("/new-game/", {"title": "Pickers", "slug": "pickers", "rules_text": "Rules.",
                               "time_zone": "Europe/Moscow", "city_size": "20", "day_start": "10:00"})
    client.post("/games/pickers/setup/add-city/", {"name": "Alpha"})
    page = client.get(reverse("game_setup", args=["pickers"])).content.decode()
    assert page.count("<select") >= 2 and ">Alpha</option>" in page  # the Tribune's city among the choices
    for chunk in page.split("<select")[1:]:
        element_id = chunk.split('id="')[1].split('"')[0]
        assert f'for="{element_id}"' in page, element_id
    # A city that is not one of the game's is refused, and nobody is appointed.
    tribune = django_user_model.objects.create_user("p_trib", "p_trib@example.com", "x-secret-123")
    response = client.post("/games/pickers/setup/appoint/", {"kind": "tribune", "username": "p_trib",
                                                              "city": "999999"})
    assert response.status_code == 400 and not tribune.staff_roles.exists()
