from roles import services
from tests.roles.conftest import NOW


def test_smoke(ng):
    c1 = ng.cities[0]
    target = ng.honest[1][0]
    services.do_submit_night_decision(c1, target, acting_user=ng.godfather[1].user, now=NOW)
    out = services.do_resolve_night(ng.game, night=2, now=NOW)
    print(out)
    assert ng.r(target).status == "dead"


def test_pages(ng, client):
    client.force_login(ng.godfather[1].user)
    r = client.get(f"/games/{ng.game.slug}/night/")
    assert r.status_code == 200, r.content
    print(r.content.decode()[:3000])
    client.force_login(ng.consigliere)
    assert client.get(f"/games/{ng.game.slug}/night/").status_code == 200
    assert client.get(f"/games/{ng.game.slug}/").status_code == 200
    client.force_login(ng.procurator)
    assert client.get(f"/games/{ng.game.slug}/end/").status_code == 200
