"""The audit log's audience: which staff member may browse which ``GameEvent`` of a
running game (``AuditScope``, ``visible_events``), read from the typed kinds of ``kernel.events``. A clause of the one
access policy (DESIGN.md "The access policy")."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Q, QuerySet

from cities.models import HOST_STAFF_KIND, City, Game, GameEvent, GameStatus, Resident, StaffRole
from cities.staff_kinds import staff_kinds_of
from kernel.events import Audience, event_audience, event_audiences
from kernel.rulesets import get_ruleset

from .models import Inbox, Message
from .policies import readable_inboxes, staff_roles_in

# --------------------------------------------------------------------------------------------------------------
# The audit log : which staff member may browse which GameEvent
# --------------------------------------------------------------------------------------------------------------
#
# Every staff action and scheduler action is a ``GameEvent``; staff browse the events of their scope in /staff/.
# A payload names residents, inboxes and messages, and the actor is a person: an event shown to the wrong host
# tells who is mafia (a post in a mafia inbox), who holds a secret rank (an offer accepted), who holds a secret
# staff kind (who ran the draw), or what a personal inbox says (a request to the city's staff). So each event kind
# has one audience among the game's staff, declared with the kind (``kernel.events``: the engine's ``EventKind``,
# each ruleset's ``event_kinds`` and ``event_families``) and decided here; a kind declared nowhere is shown to
# nobody (fail closed) until someone decides. After the game every staff member of the game sees every event (the log joins the
# archive). Site operators (/admin/) never see the log. Players never see it here.
#
# | audience | who sees it | kinds (the engine's; a ruleset's own kinds name theirs in its declarations) |
# |---|---|---|
# | STAFF | every staff member of the game | setup, posts, deaths, replacements, stand-ins, play bans, the clock's pause |
# | INBOX | staff who may read ``payload["inbox"]`` (``can_read_inbox``) | messages, memberships, inbox creation, kill, rollover |
# | PROCURATOR | the host | failed, crashed and waiting scheduled events, retries |
# | HOST_COURT | the host and the ruleset's court staff (``court_staff_kinds``) | penalty bans |
# | CITY_HOSTS | the host, the court staff and the city staff (``city_staff_kinds``) of the event's city | a city's nominations (``can_see_nominations``) |
# | CITY_STAFF | the city staff of the event's city (or their stand-in) | what a seat of the city asks its city's staff (a personal inbox's requests) |
# | CITY_STAFF_HOST | the host and the city staff of the event's city | what the city's staff and the host handle together |
# | APPOINTMENT | every staff member, but the appointment of a secret kind (``secret_staff_kinds``) only the host and its holders | staff.appointed |
# | NIGHT_STAFF | the ruleset's night staff (``night_staff_kinds``) | the mafia's night |
# | NOBODY | no staff member while the game runs | resident.flags (a seat's secret flags), the archive's per-person records, any kind declared nowhere |
#
# The actor of an event is shown only when the viewer may know them as the game's staff: the name of a holder of a
# secret staff kind only to those who ``knows_secret_staff``.

AUDIT_STAFF = Audience.STAFF
AUDIT_INBOX = Audience.INBOX
AUDIT_PROCURATOR = Audience.PROCURATOR
AUDIT_HOST_COURT = Audience.HOST_COURT
AUDIT_CITY_HOSTS = Audience.CITY_HOSTS
AUDIT_CITY_STAFF = Audience.CITY_STAFF
AUDIT_CITY_STAFF_HOST = Audience.CITY_STAFF_HOST
AUDIT_APPOINTMENT = Audience.APPOINTMENT
AUDIT_NIGHT_STAFF = Audience.NIGHT_STAFF
AUDIT_NOBODY = Audience.NOBODY


def audit_log_audience() -> dict[str, str]:
    """Event kind -> audience (see the table above), read from the typed kinds (``kernel.events.event_audiences``):
    the engine's and every registered ruleset's, each ``scheduler.<kind>`` row with its scheduled kind's. Kinds of a
    family (``kernel.events.event_families``) are not listed. Shared: read only."""
    return event_audiences()


def audit_audience(kind: str) -> str:
    """The audience of GameEvent ``kind`` (one of the ``AUDIT_*`` names); ``AUDIT_NOBODY`` when undecided
    (``kernel.events.event_audience``)."""
    return event_audience(kind)


#: Payload keys whose numbers are plain quantities (days, counts, drawn numbers), shown as they are.
AUDIT_PLAIN_NUMBERS = frozenset({"day", "number", "numbers", "night", "count", "length", "hours", "calendar_days",
                                 "position", "signups", "members", "moved", "cancelled", "votes", "population", "mafia_count",
                                 "minutes", "old_minutes"})

#: Payload keys naming objects -> the kind of object (``AuditScope._reference_map``); any other id is "…".
AUDIT_REFERENCES: dict[str, str] = {
    **dict.fromkeys(["resident", "nominee", "candidate", "voter", "proposer", "other", "nominator", "choice",
                     "judge", "judges", "candidates", "spirits", "winner"], "resident"),
    **dict.fromkeys(["inbox", "inboxes", "predecessor", "successor", "created", "precincts"], "inbox"),
    "message": "message", "city": "city", "cities": "city",
    **dict.fromkeys(["user", "old_user", "new_user"], "user"),
    **dict.fromkeys(["role", "tribune", "absent", "organizer"], "role"),
    "session": "session", "case": "case", "proxy": "proxy", "declaration": "declaration", "demand": "demand",
    "offer": "offer", "post": "post", "request": "request", "stand_in": "stand_in",
}

#: The engine's models behind the public-id references of ``AUDIT_REFERENCES``; a ruleset adds its own records'
#: (``RulesetSpec.audit_reference_models``), for its games only.
AUDIT_REFERENCE_MODELS = {
    "post": "cities.PublicPost",
    "stand_in": "staff.StaffStandIn",
}


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class AuditScope:
    """What one viewer may see of one game's audit log; build once per page (a few queries), then ask
    ``can_see(event)`` per event. ``visible_events`` is its query form."""

    def __init__(self, viewer, game: Game | int):
        self.game_id = game if isinstance(game, int) else game.pk
        self.viewer = viewer
        roles = staff_roles_in(viewer, self.game_id)
        self.kinds = {r.kind for r in roles}
        self.staff_cities = {r.city_id for r in roles if r.city_id is not None}  # a city's staff, stand-ins too
        status, ruleset = Game.objects.filter(pk=self.game_id).values_list("status", "ruleset").first() or (None, None)
        self.finished = status == GameStatus.FINISHED
        self._ruleset = ruleset or ""
        # The ruleset's staff tables (``cities.staff_kinds``): the court reads with the host, the night staff read
        # the night, and who holds a secret kind is known to the host and to its holders only.
        court, self.night, self.secret = ((staff_kinds_of(ruleset, table) for table in
                                           ("court_staff_kinds", "night_staff_kinds", "secret_staff_kinds"))
                                          if ruleset else (frozenset(), frozenset(), frozenset()))
        self.host_court = frozenset({HOST_STAFF_KIND}) | court
        self._readable = None
        self._cities = None

    def readable_inbox_ids(self) -> set[int]:
        if self._readable is None:
            self._readable = set(readable_inboxes(self.viewer, self.game_id).values_list("pk", flat=True))
        return self._readable

    def spec(self):
        """The ``RulesetSpec`` of the game, or None for a game that is gone."""
        return get_ruleset(self._ruleset) if self._ruleset else None

    def _reference_models(self) -> dict[str, str]:
        spec = self.spec()
        return {**(spec.audit_reference_models if spec else {}), **AUDIT_REFERENCE_MODELS}

    def _city_maps(self) -> dict[str, dict[int, int]]:
        """Object id -> city id for the objects event payloads name (residents, and the ruleset's records of
        ``audit_city_references``: a proxy request, say)."""
        if self._cities is None:
            from django.apps import apps

            game = self.game_id
            self._cities = {"resident": dict(Resident.objects.filter(game_id=game).values_list("pk", "city_id"))}
            for key in (self.spec().audit_city_references if self.spec() else ()):
                model = apps.get_model(self._reference_models()[key])
                self._cities[key] = dict(model.objects.filter(game_id=game).values_list("pk", "city_id"))
        return self._cities

    def city_of(self, event) -> int | None:
        """The city an event is about: ``payload["city"]``, else the city of the resident (or of the ruleset's
        record of ``audit_city_references``) it names; None when it names none."""
        payload = event.payload or {}
        if isinstance(payload.get("city"), int):
            return payload["city"]
        maps = self._city_maps()
        for key in maps:
            if isinstance(payload.get(key), int):
                return maps[key].get(payload[key])
        return None

    def can_see(self, event) -> bool:
        """True when the viewer may see ``event`` (a GameEvent of this game) in the audit log."""
        if not self.kinds or event.game_id != self.game_id:
            return False
        if self.finished:
            return True
        audience = audit_audience(event.kind)
        k = self.kinds
        if audience == AUDIT_STAFF:
            return True
        if audience == AUDIT_INBOX:
            return (event.payload or {}).get("inbox") in self.readable_inbox_ids()
        if audience == AUDIT_PROCURATOR:
            return HOST_STAFF_KIND in k
        if audience == AUDIT_HOST_COURT:
            return bool(k & self.host_court)
        if audience == AUDIT_NIGHT_STAFF:
            return bool(k & self.night)
        if audience == AUDIT_APPOINTMENT:
            if (event.payload or {}).get("kind") in self.secret:
                return bool(k & ({HOST_STAFF_KIND} | self.secret))
            return True
        if audience in (AUDIT_CITY_HOSTS, AUDIT_CITY_STAFF, AUDIT_CITY_STAFF_HOST):
            if audience == AUDIT_CITY_HOSTS and k & self.host_court:
                return True
            if audience == AUDIT_CITY_STAFF_HOST and HOST_STAFF_KIND in k:
                return True
            return self.city_of(event) in self.staff_cities
        return False

    def shown_details(self, event) -> list[tuple[str, str]]:
        """The payload of ``event`` as the audit log shows it to this viewer: ``[(key, text)]`` sorted by key,
        with no database id (a sequential id of a message or an inbox counts what the viewer may
        not read). A resident, city or account is shown by name, an inbox by title and public id when the viewer
        may read it (else "—"), a message by its inbox's public id, a request, session, case, demand, offer,
        stand-in period or post by its public id; plain numbers (days, counts) as they are; any other id as "…".
        Empty for an event the viewer may not see."""
        if not self.can_see(event):
            return []
        shown = []
        for key, value in sorted((event.payload or {}).items()):
            if isinstance(value, list) and value and all(_is_int(v) for v in value):
                text = ", ".join(self._reference(event.kind, key, v) for v in value)
            elif _is_int(value):
                text = self._reference(event.kind, key, value)
            else:
                text = str(value)
            shown.append((key, text[:200]))
        return shown

    def _reference(self, kind: str, key: str, value: int) -> str:
        if key in AUDIT_PLAIN_NUMBERS:
            return str(value)
        spec = self.spec()
        own = spec.audit_kind_references.get(kind, {}).get(key) if spec is not None else None
        target = own or AUDIT_REFERENCES.get(key)
        if target is None:
            return "…"
        return self._references(target).get(value, "—")

    def _references(self, target: str) -> dict[int, str]:
        """Database id -> what the viewer is shown, for the objects of kind ``target`` in this game."""
        cache = self.__dict__.setdefault("_reference_maps", {})
        if target not in cache:
            cache[target] = self._reference_map(target)
        return cache[target]

    def _reference_map(self, target: str) -> dict[int, str]:
        from django.apps import apps

        game = self.game_id
        if target == "resident":
            return dict(Resident.objects.filter(game_id=game).values_list("pk", "name"))
        if target == "city":
            return dict(City.objects.filter(game_id=game).values_list("pk", "name"))
        if target == "user":
            return {u.pk: u.public_name for u in get_user_model().objects.filter(
                Q(signups__game_id=game) | Q(staff_roles__game_id=game) | Q(seats__game_id=game)).distinct()}
        if target == "role":
            return {r.pk: str(r.get_kind_display()) + (f" ({r.city.name})" if r.city_id else "")
                    for r in StaffRole.objects.filter(game_id=game).select_related("city")}
        readable = self.readable_inbox_ids()
        if target == "inbox":
            return {pk: f"{title} [{public_id}]" for pk, title, public_id in
                    Inbox.objects.filter(game_id=game, pk__in=readable).values_list("pk", "title", "public_id")}
        if target == "message":
            return {pk: f"[{public_id}]" for pk, public_id in Message.objects.filter(
                inbox__game_id=game, inbox_id__in=readable).values_list("pk", "public_id")}
        label = self._reference_models().get(target)
        if label is None:  # a record the game's ruleset does not keep
            return {}
        model = apps.get_model(label)
        return {pk: f"[{public_id}]" for pk, public_id in model.objects.filter(game_id=game).values_list("pk", "public_id")}

    def shows_actor(self, event) -> bool:
        """True when the viewer may see who acted: never the name of a holder of a secret staff kind (the
        ruleset's ``secret_staff_kinds``: a Consigliere, say) to someone who may not know who holds it."""
        if event.actor_id is None:
            return True
        if self.finished or HOST_STAFF_KIND in self.kinds or self.kinds & self.secret:
            return True
        if not hasattr(self, "_secret_staff_users"):
            self._secret_staff_users = set(StaffRole.objects.filter(
                game_id=self.game_id, kind__in=self.secret).values_list("user_id", flat=True))
        return event.actor_id not in self._secret_staff_users


def visible_events(viewer, game: Game | int) -> QuerySet:
    """The GameEvents of ``game`` that ``viewer`` may browse in the audit log (``AuditScope.can_see``), as an
    unevaluated QuerySet ordered by time. Empty for anyone without a staff role in the game (players, site
    operators)."""

    scope = AuditScope(viewer, game)
    if not scope.kinds:
        return GameEvent.objects.none()
    events = GameEvent.objects.filter(game_id=scope.game_id).only("id", "game_id", "kind", "payload")
    ids = [e.pk for e in events if scope.can_see(e)]
    return GameEvent.objects.filter(pk__in=ids).order_by("at", "id")
