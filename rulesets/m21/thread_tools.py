"""Reading tools of the M21 game thread, as forum players know them (RULES.md M-VOTE-5, M-VOTE-8): ISO (the
thread filtered to some players' posts, with their vote receipts) and the activity of each day (posts and votes
per player, what M-VOTE-5 asks). Every read is the game thread's: whoever may not read the thread gets nothing
(``inboxes.policies.can_read_inbox``), and a dead reader reads only what the policy dates to them."""
from __future__ import annotations

from dataclasses import dataclass

from django import forms
from django.conf import settings
from django.core.paginator import Page, Paginator
from django.http import Http404

from cities.models import Game, LifeStatus, Resident
from inboxes import policies
from inboxes.hooks import annotate_messages
from inboxes.models import Inbox
from inboxes.selectors import messages_shown_to

from .day_services import display_names, stored_run
from .models import M21Day
from .service_common import thread_of


def readable_thread(viewer, game: Game) -> Inbox:
    """The game thread of ``game`` when ``viewer`` may read it; ``Http404`` otherwise (a missing thread and a
    forbidden one look the same, as ``access_inbox_by_id`` answers)."""
    thread = thread_of(game)
    if thread is None or not policies.can_read_inbox(viewer, thread):
        raise Http404("No such thread.")
    return thread


class IsoForm(forms.Form):
    """Whose posts to show (ISO): one or several seats of the game, by their names now."""

    players = forms.ModelMultipleChoiceField(
        label="Players", queryset=Resident.objects.none(), widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Choose at least one player.",
                        "invalid_choice": "Choose players of this game.",
                        "invalid_pk_value": "Choose players of this game."})

    def __init__(self, *args, game: Game, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["players"].queryset = Resident.objects.filter(game=game).order_by("name")
        self.fields["players"].to_field_name = "public_id"


@dataclass
class IsoPage:
    """One page of ISO: the chosen seats and the page of their posts (oldest first), each with ``receipt_lines``
    and ``author_display`` as the thread shows them."""

    players: list[Resident]
    page: Page


def iso_page(viewer, thread: Inbox, players: list[Resident], page_number) -> IsoPage:
    """Page ``page_number`` (1-based; anything else: the first) of the posts of ``players`` in ``thread``, as
    ``viewer`` (who may read it) reads them, paginated as the thread is (``MAFIA_MESSAGES_PER_PAGE``)."""
    posts = (messages_shown_to(viewer, thread).filter(author_resident__in=[p.pk for p in players])
             .select_related("author_resident").prefetch_related("revisions").order_by("received_at", "id"))
    page = Paginator(posts, settings.MAFIA_MESSAGES_PER_PAGE).get_page(page_number)
    annotate_messages(thread, list(page.object_list))
    return IsoPage(players=players, page=page)


@dataclass
class ActivityRow:
    """One seat's day (M-VOTE-5): its name now, posts and votes cast while the day was open, the vote in place
    (a name, "No Lynch" or ""), whether it was still alive at the end (or now), and what M-VOTE-5 misses."""

    name: str
    posts: int
    votes: int
    vote: str
    living: bool
    missing: list[str]


def day_activity(day: M21Day) -> list[ActivityRow]:
    """Posts and votes per seat of ``day`` (the seats living when it began), from the day's stored vote, in
    seating order: what M-VOTE-5 asks (a vote in place, a vote cast, two posts), for everyone who reads the
    thread. A seat that left the day is listed with what it did, without offences."""
    run = stored_run(day)
    names = display_names(day.game)
    count = run.day.count()
    standing = {voter: target for target, voters in count.votes.items() for voter in voters}
    rows = []
    for seat, (posts, votes) in run.day.activity().items():
        living = seat in count.living
        target = standing.get(seat)
        missing = []
        if living:
            if target is None and seat not in count.voided:
                missing.append("no vote in place")
            if votes == 0:
                missing.append("no vote cast")
            if posts < 2:
                missing.append("fewer than two posts")
        rows.append(ActivityRow(
            name=names.get(seat, seat), posts=posts, votes=votes, living=living, missing=missing,
            vote="" if target is None else ("No Lynch" if target == "NO_LYNCH" else names.get(target, target))))
    return rows


def days_of(game: Game) -> list[M21Day]:
    """The game's days, first to last."""
    return list(M21Day.objects.filter(game=game).order_by("number"))


def living_names(game: Game) -> list[str]:
    """The names of the living players now, for the vote buttons."""
    return list(Resident.objects.filter(game=game, status=LifeStatus.ALIVE).order_by("name")
                .values_list("name", flat=True))
