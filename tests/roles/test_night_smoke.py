from roles import services
from tests.roles.conftest import NOW


def test_smoke(ng):
    c1 = ng.cities[0]
    target = ng.honest[1][0]
    services.do_submit_night_decision(c1, target, acting_user=ng.godfather[1].user, now=NOW)
    out = services.do_resolve_night(ng.game, night=2, now=NOW)
    print(out)
    assert ng.r(target).status == "dead"
