"""The access policy of a day of nominations and votings by city: who sees nominations, the
standing tally of a city and speech requests. Clauses of ``inboxes.policies``,
built on its staff roles and inbox reads."""
from __future__ import annotations

from cities.models import HOST_STAFF_KIND, GameStatus
from cities.staff_kinds import staff_kinds_of

from .policies import can_read_inbox, staff_roles_in


def can_see_nominations(user, city) -> bool:
    """True when ``user`` may see who nominated whom in ``city`` (nominations are made in the personal
    inbox, which the Tribune runs): the city's Tribune, the Procurator (who hears requests) and the
    Arbiter (who receives the results). After the game everyone may (voting is public)."""
    if city.game.status == GameStatus.FINISHED:
        return True
    roles = staff_roles_in(user, city.game_id)
    hosts = {HOST_STAFF_KIND, *staff_kinds_of(city.game, "court_staff_kinds")}
    return any(r.kind in hosts or r.city_id == city.pk for r in roles)


def can_see_voting_tally(user, city, voting_inboxes) -> bool:
    """True when ``user`` may see the standing tally of ``city``'s voting (names of voters): exactly when they may
    read one of its ``voting_inboxes`` (members, the Tribune, Procurator, Arbiter; everyone after the
    game), so the tally never tells more than the threads do."""
    return any(can_read_inbox(user, inbox) for inbox in voting_inboxes)


def can_see_speech_requests(user, city) -> bool:
    """A confrontation or last-word request is seen by the city's Tribune and the Procurator."""
    return any(r.kind == HOST_STAFF_KIND or r.city_id == city.pk
               for r in staff_roles_in(user, city.game_id))
