"""Viewer-scoped reads for the archive pages and notifications.

Every read of inboxes and messages starts from ``inboxes.policies`` (``readable_inboxes``/``readable_messages``);
facts about residents (alignments, ranks) go through ``visible_alignment`` / ``known_seat_roles``, so that a page
built here during the game shows no more than the policy allows.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db import connection
from django.db.models import QuerySet
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from cities.models import Alignment, City, Game, GameEvent, GameStatus, LifeStatus, PublicPost, Resident, StaffRole
from inboxes import knowledge, policies, policy_tables, viewer_reads
from inboxes.models import Inbox, Message
from kernel.errors import NotProvidedByRuleset
from kernel.events import EventKind, event_timelines
from kernel.rulesets import ruleset_of, seat_state_relations

from .models import DisclosureConsent, OpenRequest
from .services import consenter_for


@dataclass
class ConsentRow:
    """One inbox on the "my consents" page: whether the viewer consented, how many of the needed consents are in,
    and whether the inbox is disclosed already (then the consent can no longer be withdrawn)."""

    inbox: Inbox
    consented: bool
    given: int
    needed: int
    disclosed: bool


def consent_rows_for(viewer) -> list[ConsentRow]:
    """Every inbox, in every game, whose disclosure waits for ``viewer``'s consent: of the kinds its game's ruleset
    discloses only with consent (``consent_after_game``), those whose consenters (``policies.consenters_of``)
    include a seat ``viewer`` holds or a staff role of theirs (a personal inbox, a role PM, a secret
    inbox its member or organizer consents for). Ordered by game, then kind, then id."""

    if not getattr(viewer, "is_authenticated", False):
        return []
    viewer_reads.forget_viewer_cache(viewer)
    seats = list(Resident.objects.filter(user=viewer).values_list("pk", flat=True))
    role_ids = list(StaffRole.objects.filter(user=viewer).values_list("pk", flat=True))
    # The kinds each game's ruleset discloses only with consent; ``consenter_for`` keeps those the viewer consents for.
    consent_kinds = Inbox.objects.filter(policy_tables.kinds_q("consent_after_game"))
    inboxes = (consent_kinds.filter(resident__in=seats)
               | consent_kinds.filter(memberships__resident__in=seats,
                                      memberships__state__in=policy_tables.READING_STATES)
               | consent_kinds.filter(organizer__in=role_ids))
    rows = []
    for inbox in inboxes.distinct().select_related("game", "city").order_by("game_id", "kind", "pk"):
        who = consenter_for(viewer, inbox)
        if who is None:
            continue
        residents, role = policies.consenters_of(inbox)
        active = DisclosureConsent.objects.filter(inbox=inbox, revoked_at__isnull=True)
        given = active.filter(resident__in=residents).count() + (active.filter(staff_role=role).count() if role else 0)
        key = {"resident_id": who[1]} if who[0] == "resident" else {"staff_role_id": who[1]}
        rows.append(ConsentRow(inbox=inbox, consented=active.filter(**key).exists(), given=given,
                               needed=len(residents) + (1 if role else 0), disclosed=policies.is_disclosed(inbox)))
    return rows


@dataclass
class OpenableRow:
    """An "open to anyone who asks" inbox on the archive page, and whether the viewer opened it already."""

    inbox: Inbox
    opened: bool
    readable: bool


def openable_rows_for(viewer, game: Game) -> list[OpenableRow]:
    """The inboxes of finished ``game`` the viewer may open by one logged click, with their state."""
    inboxes = list(policies.requestable_inboxes(viewer, game).select_related("game", "city").order_by("kind", "city__number", "pk"))
    if not inboxes:
        return []
    opened = set(OpenRequest.objects.filter(user=viewer, inbox__in=inboxes).values_list("inbox_id", flat=True))
    readable = set(policies.readable_inboxes(viewer, game).filter(pk__in=[i.pk for i in inboxes]).values_list("pk", flat=True))
    return [OpenableRow(inbox=i, opened=i.pk in opened, readable=i.pk in readable) for i in inboxes]


# --------------------------------------------------------------------------------------------------------------
# Search: only over readable messages
# --------------------------------------------------------------------------------------------------------------

def search_messages(viewer, game: Game, query: str, limit: int = 50) -> list[Message]:
    """Messages of ``game`` that ``viewer`` may read (``readable_messages``) matching ``query``: PostgreSQL
    full-text search (``simple`` configuration, ranked) when the database is PostgreSQL, a case-insensitive
    substring match otherwise. Hidden messages are searched by their moderators only. Newest first within rank;
    at most ``limit``. An empty query gives []."""
    query = (query or "").strip()
    if not query:
        return []
    base = policies.readable_messages(viewer, Message.objects.filter(inbox__game=game)).select_related("inbox", "inbox__city")
    base = base.filter(is_hidden=False)
    if connection.vendor == "postgresql":
        from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector

        vector = SearchVector("body", config="simple")
        sq = SearchQuery(query, config="simple", search_type="websearch")
        found = (base.annotate(document=vector, rank=SearchRank(vector, sq)).filter(document=sq)
                 .order_by("-rank", "-received_at", "-id"))
        results = list(found[:limit])
        if results:
            return results
    return list(base.filter(body__icontains=query).order_by("-received_at", "-id")[:limit])


# --------------------------------------------------------------------------------------------------------------
# The timeline
# --------------------------------------------------------------------------------------------------------------

@dataclass
class TimelineItem:
    """One line of the timeline: ``at`` (aware UTC), ``kind`` ("post", "message", "death", "vote", "election",
    "court", "night", "status"), a short ``text``, the ``city`` (or None), the ``inbox`` (for messages and votes),
    and a ``url`` (or "")."""

    at: datetime
    kind: str
    text: str
    city: City | None = None
    inbox: Inbox | None = None
    url: str = ""


@dataclass
class TimelineDay:
    """The items of one game day (``day`` 0 = before the first day), oldest first."""

    day: int
    items: list[TimelineItem] = field(default_factory=list)


def public_event_kinds() -> dict[str, str]:
    """GameEvent kinds shown on the timeline, and as what (their declared ``timeline`` line: the engine's and the
    registered rulesets', ``kernel.events.event_timelines``). A payload is never shown raw: each kind has its own
    line, and an event tied to a city is shown only to a viewer who may read that city's inbox (or after the game),
    because the city inbox is where it is announced. An event of a seat in a game without cities is announced in
    the ruleset's own threads: the timeline shows it after the game."""
    return event_timelines()


def readable_messages_of(viewer, game: Game, *, city: int | None = None, kind: str | None = None) -> QuerySet[Message]:
    """``readable_messages`` of ``game`` for ``viewer``, narrowed to a city number and an inbox kind."""
    qs = policies.readable_messages(viewer, Message.objects.filter(inbox__game=game))
    if city:
        qs = qs.filter(inbox__city__number=city)
    if kind:
        qs = qs.filter(inbox__kind=kind)
    return qs


def timeline_for(viewer, game: Game, *, city: int | None = None, kind: str | None = None,
                 limit: int = 2000) -> list[TimelineDay]:
    """The day-by-day story of ``game`` as ``viewer`` may read it: published posts, the
    messages of readable inboxes (filtered by ``city`` number and inbox ``kind``), and public events (the kinds
    the engine and the rulesets declare with a timeline line: deaths, the game's status, and the ruleset's own,
    worded by it). A death shows the alignment only as
    ``visible_alignment`` allows. Grouped by the day the game was in; at most ``limit`` messages."""


    items: list[tuple[int, TimelineItem]] = []
    if not kind:
        for post in PublicPost.objects.filter(game=game, published_at__isnull=False).order_by("published_at"):
            items.append((-1, TimelineItem(at=post.published_at, kind="post", text=post.title,
                                           url=reverse("post_detail", args=[game.slug, post.public_id]))))
    messages = (readable_messages_of(viewer, game, city=city, kind=kind)
                .select_related("inbox", "inbox__city").order_by("received_at", "id")[:limit])
    for m in messages:
        text = "" if m.is_hidden else m.body[:200]
        items.append((m.inbox.day_number, TimelineItem(at=m.received_at, kind="message", city=m.inbox.city, inbox=m.inbox,
                                                       text=f"{m.author_name}: {text}",
                                                       url=reverse("inbox_thread", args=[m.inbox.public_id]))))
    if not kind:
        finished = game.status == GameStatus.FINISHED
        cities = {c.pk: c for c in City.objects.filter(game=game)}
        readable_cities = set(cities) if finished else set(
            policies.readable_inboxes(viewer, game).filter(kind=ruleset_of(game).inbox_kind_for("city_square"))
            .values_list("city_id", flat=True))

        residents = {r.pk: r for r in Resident.objects.filter(game=game).select_related("city", "game")}
        spec = ruleset_of(game)
        related = spec.timeline_records(game)
        for event in GameEvent.objects.filter(game=game, kind__in=list(public_event_kinds())).order_by("at", "id"):
            item = _event_item(viewer, event, spec, residents, cities, finished, related)
            if item is None:
                continue
            if item.city is not None and item.city.pk not in readable_cities:
                continue
            if city and (item.city is None or item.city.number != city):
                continue
            items.append((event.payload.get("day", -1) if isinstance(event.payload, dict) else -1, item))
    items.sort(key=lambda pair: pair[1].at)
    days: dict[int, TimelineDay] = {}
    current = 0
    for day, item in items:
        if day is not None and day >= 0:
            current = max(current, day)
        days.setdefault(current, TimelineDay(day=current)).items.append(item)
    return [days[d] for d in sorted(days)]


def _event_item(viewer, event, spec, residents: dict[int, Resident], cities: dict[int, City],
                finished: bool, related: dict) -> TimelineItem | None:
    """The timeline line of one public event, or None. The engine words its own kinds (a death, the game's
    status); a kind a ruleset declares with a timeline line is worded by the game's ruleset ``spec``
    (``RulesetSpec.timeline_line``), which decides what waits for the end of the game. A death of a seat in no
    city waits for it too."""

    payload = event.payload if isinstance(event.payload, dict) else {}
    shown = public_event_kinds()[event.kind]
    if event.kind == EventKind.RESIDENT_DIED:
        resident = residents.get(payload.get("resident"))
        if resident is None or (resident.city_id is None and not finished):
            return None
        alignment = knowledge.visible_alignment(viewer, resident)
        text = _("%(name)s died") % {"name": resident.name}
        if alignment:  # the side in the ruleset's words (Town / Mafia, say)
            side = ruleset_of(resident.game).wording(f"side_{alignment}", Alignment(alignment).label)
            text += f" ({side})"
        return TimelineItem(at=event.at, kind=shown, text=text, city=resident.city)
    if event.kind == EventKind.GAME_STATUS:
        return TimelineItem(at=event.at, kind=shown, text=_("Game status: %(status)s") % {"status": payload.get("status", "")})
    line = spec.timeline_line(event, shown, viewer=viewer, residents=residents, cities=cities, finished=finished,
                              related=related)
    if line is None:
        return None
    text, city = line
    return TimelineItem(at=event.at, kind=shown, text=text, city=city)


def is_finished(game: Game) -> bool:
    """True when ``game`` is over (the archive front page and the cast list exist only then)."""
    return game.status == GameStatus.FINISHED


# --------------------------------------------------------------------------------------------------------------
# The front page
# --------------------------------------------------------------------------------------------------------------

@dataclass
class CastRow:
    """One resident on the cast list, after the game: alignment and roles as the policy shows them."""

    resident: Resident
    alignment: str | None
    roles: list[str]

    @property
    def alignment_label(self) -> str:
        """The alignment in the page's language ("мафия"), "" when the policy shows none."""
        return str(Alignment(self.alignment).label) if self.alignment else ""

    @property
    def role_labels(self) -> list[str]:
        """The roles in the page's language, in the order of ``roles``."""
        return [str(ROLE_LABELS.get(role, role)) for role in self.roles]


#: The cast list's role keys in words (RULES.md terms).
ROLE_LABELS = {"commissar": gettext_lazy("commissar"), "godfather": gettext_lazy("godfather"),
               "judge": gettext_lazy("judge"), "spirit": gettext_lazy("spirit")}


@dataclass
class CityScore:
    """A city's score at the end: living and dead honest and mafia (``city`` None: the whole game's)."""

    city: City | None
    honest_alive: int
    mafia_alive: int
    honest_dead: int
    mafia_dead: int


@dataclass
class FrontPage:
    """The archive front page of a finished game: ``winner`` ("honest", "mafia" or "" when ended without a
    winner), the per-city ``scores`` and their total, and the ``cast``."""

    winner: str
    scores: list[CityScore]
    total: CityScore | None
    cast: list[CastRow]


def winner_of(game: Game, residents: list[Resident]) -> str:
    """The winning side of a finished game, a side key of its ruleset ("honest", "mafia", "town"...) or "": the
    winner its ruleset recorded at the end (``RulesetSpec.recorded_winner``: a stored result or a recorded event,
    "" for a game ended early by its staff); without one, what the game's ruleset decides over the living of
    ``residents`` (the game's seats as the caller read them: ``RulesetSpec.winner_among``; "" when it decides none
    or has no victory check)."""

    recorded = ruleset_of(game).recorded_winner(game)
    if recorded is not None:
        return recorded
    try:
        return ruleset_of(game).winner_among(game, residents) or ""
    except NotProvidedByRuleset:
        return ""


def _score(city: City | None, seats: list[Resident]) -> CityScore:
    alive = [r for r in seats if r.status == LifeStatus.ALIVE]
    dead = [r for r in seats if r.status != LifeStatus.ALIVE]
    return CityScore(city=city,
                     honest_alive=sum(1 for r in alive if r.alignment == Alignment.HONEST),
                     mafia_alive=sum(1 for r in alive if r.alignment == Alignment.MAFIA),
                     honest_dead=sum(1 for r in dead if r.alignment == Alignment.HONEST),
                     mafia_dead=sum(1 for r in dead if r.alignment == Alignment.MAFIA))


def front_page_for(viewer, game: Game) -> FrontPage | None:
    """The front page of ``game`` for ``viewer``; None before the end (the cast list names the mafia)."""

    if game.status != GameStatus.FINISHED:
        return None
    residents = list(Resident.objects.filter(game=game).select_related("city", "user", "game", *seat_state_relations())
                     .order_by("city__number", "name"))
    spec = ruleset_of(game)
    scores = [_score(city, [r for r in residents if r.city_id == city.pk])
              for city in City.objects.filter(game=game).order_by("number")]
    total = _score(None, residents)  # every seat, in a city or not (a game without cities has no city scores)
    cast = []
    for r in residents:
        roles = [role.key for role in knowledge.known_seat_roles(viewer, r)]
        roles += [key for key, _label in spec.public_seat_roles(r)]
        cast.append(CastRow(resident=r, alignment=knowledge.visible_alignment(viewer, r), roles=roles))
    return FrontPage(winner=winner_of(game, residents), scores=scores, total=total, cast=cast)


def ruleset_sections_for(viewer, game: Game, keys: tuple[str, ...] | None = None) -> list:
    """The sections the game's ruleset adds to an archive page, in order: ``keys`` when given (e.g. the ruleset's
    ``votes_page_sections``), else its ``archive_sections``; each a ``kernel.ruleset_parts.ArchiveSection`` as
    ``viewer`` may see it. A section the ruleset withholds from the viewer (None) is left out, and a ruleset that
    declares none adds nothing."""
    spec = ruleset_of(game)
    wanted = spec.archive_sections if keys is None else keys
    sections = (spec.archive_section(game, key, viewer=viewer) for key in wanted)
    return [section for section in sections if section is not None]


def readable_inbox_list(viewer, game: Game) -> list[Inbox]:
    """The inboxes of ``game`` ``viewer`` may read, by kind, city and id (the archive's "read in place" links)."""
    return list(policies.readable_inboxes(viewer, game).select_related("city").order_by("kind", "city__number", "pk"))
