"""Viewer-scoped reads of inboxes and messages for pages. Every query starts from ``inboxes.policies``.

Query counts are constant in the number of inboxes and messages (tests/inboxes/test_query_budgets.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache

from django.conf import settings
from django.core.paginator import Page, Paginator
from django.db.models import Count, DateTimeField, F, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.http import Http404
from django.utils.translation import gettext as _

from cities.models import Game, GameStatus
from inboxes import knowledge, moderation_policy, policy_tables
from kernel.errors import InvalidInput
from kernel.public_ids import is_public_id
from kernel.rulesets import rule_id, ruleset_of

from . import policies
from .hooks import annotate_messages
from .models import Inbox, Membership, MembershipState, Message, MessageRevision, ReadMark

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def messages_shown_to(viewer, inbox: Inbox) -> QuerySet[Message]:
    """The messages of ``inbox`` that ``viewer`` (who may read it) reads: all of them, but for a dead seat in a
    dated kind those received up to its death (``policies.message_cutoff``). Unordered."""
    messages = Message.objects.filter(inbox=inbox)
    cutoff = policies.message_cutoff(viewer, inbox)
    return messages if cutoff is None else messages.filter(received_at__lte=cutoff)


def _dated_out(viewer, game: Game) -> Q | None:
    """``Q`` over Message (in a subquery of inboxes) of what a dead ``viewer`` does not read in ``game``: the
    messages of dated kinds received after its death while the game runs (``policies.message_cutoff``)."""
    seat = policies.seat_in(viewer, game) if getattr(viewer, "is_authenticated", False) else None
    died = policies.knowledge_cutoff(seat)
    if died is None or game.status == GameStatus.FINISHED:
        return None
    dated = policy_tables.kinds_of(game, "dated_kinds")
    return Q(inbox__kind__in=sorted(dated), received_at__gt=died) if dated else None


@lru_cache(maxsize=65536)
def inbox_live_ids(inbox_id: str) -> tuple[int, int] | None:
    """The database ids ``(inbox, game)`` of the inbox with public id ``inbox_id``, or None for a malformed or
    missing id: the keys of its live versions (``kernel.live``), never shown to anyone. Both never change, so
    each process remembers them (bounded); the query runs whether the id exists or not."""
    if not is_public_id(inbox_id):
        return None
    row = Inbox.objects.filter(public_id=str(inbox_id)).values_list("pk", "game_id").first()
    return tuple(row) if row is not None else None


def live_inbox_ids(viewer, game: Game) -> list[int]:
    """The database ids of the inboxes of ``game`` whose new messages ``viewer`` may see: those they may read
    (``policies.readable_inboxes``), less those whose view stops at a time (a dead seat's dated kinds while the
    game runs, ``_dated_out``): a post there tells them nothing, so their live polls must not depend on it."""
    rows = policies.readable_inboxes(viewer, game).values_list("pk", "kind")
    if _dated_out(viewer, game) is None:
        return [pk for pk, _kind in rows]
    dated = policy_tables.kinds_of(game, "dated_kinds")
    return [pk for pk, kind in rows if kind not in dated]


def inbox_list_for(viewer, game: Game) -> list[Inbox]:
    """The inboxes of ``game`` that ``viewer`` may read, each annotated with ``unread`` (int: messages received
    after the viewer's read mark) and ``last_activity`` (aware UTC or None), ordered by the game's ruleset's
    ``inbox_kind_order`` (the kinds it does not name last), then city and id. Killed inboxes are included (``is_open`` False); the page shows them apart. 3 queries at most.
    """
    last_read = Coalesce(
        Subquery(ReadMark.objects.filter(user=viewer, inbox=OuterRef("pk")).values("last_read_at")[:1]),
        Value(_EPOCH, output_field=DateTimeField()),
    )
    unread = Message.objects.filter(inbox=OuterRef("pk"), received_at__gt=OuterRef("last_read"))
    latest = Message.objects.filter(inbox=OuterRef("pk"))
    dated_out = _dated_out(viewer, game)
    if dated_out is not None:  # a dead viewer: nothing posted after the death counts or shows
        unread, latest = unread.exclude(dated_out), latest.exclude(dated_out)
    unread = unread.order_by().values("inbox").annotate(c=Count("pk")).values("c")
    latest = latest.order_by("-received_at", "-id").values("received_at")[:1]
    inboxes = list(
        policies.readable_inboxes(viewer, game)
        .select_related("city")
        .annotate(last_read=last_read)
        .annotate(unread=Coalesce(Subquery(unread, output_field=IntegerField()), 0),
                  last_activity=Subquery(latest, output_field=DateTimeField()))
    )
    order = {kind: i for i, kind in enumerate(ruleset_of(game).inbox_kind_order)}
    inboxes.sort(key=lambda i: (order.get(i.kind, len(order)), i.city.number if i.city else 0, i.pk))
    return inboxes


@dataclass
class ThreadPage:
    """One page of an inbox thread for one viewer."""

    page: Page
    show_hidden_text: bool
    #: The inbox's members (not the removed), with ``state``, ``banned_until`` and ``resident.name`` loaded only.
    members: list[Membership]
    #: 1-based position of the viewer's first unread message in the thread, or None when nothing is unread.
    first_unread: int | None = None
    #: Whether showing this page may advance the viewer's read mark: only a page that does not skip an unread
    #: message (it starts at or before the first unread one), so nothing unseen is ever marked read.
    marks_read: bool = True
    #: Whether the page shows a message the viewer had not read (received after their read mark): when it shows
    #: none, the read mark already covers the page and the view writes nothing.
    shows_unread: bool = True


#: The columns a shown message needs (``inboxes.templatetags.threads``, ``moderation_policy.editable_positions``, the post
#: hooks' ``annotate``): its body is never shown (``body_html`` is).
_DISPLAYED = ("id", "inbox_id", "author_user_id", "author_resident_id", "author_staff_id", "author_name",
              "body_html", "received_at", "edited_at", "is_hidden")


def _for_display(messages: QuerySet[Message]) -> QuerySet[Message]:
    """``messages`` with what a page shows of them (``_DISPLAYED``) and, in the same query, of their author only
    the link to the seat (``author_seat_public_id``) or the staff role's kind (``author_staff_kind``): no seat or
    role object per message, whose cost would grow a page with its number of authors."""
    return messages.only(*_DISPLAYED).annotate(author_seat_public_id=F("author_resident__public_id"),
                                               author_staff_kind=F("author_staff__kind"))


def _read_counts(viewer, inbox: Inbox) -> tuple[int, int] | None:
    """``(read, total)``: how many of ``inbox``'s messages ``viewer`` has read (received at or before their read
    mark) and how many there are; None for an anonymous viewer. One query."""
    if not getattr(viewer, "is_authenticated", False):
        return None
    mark = Coalesce(
        Subquery(ReadMark.objects.filter(user=viewer, inbox=inbox).values("last_read_at")[:1]),
        Value(_EPOCH, output_field=DateTimeField()),
    )
    counts = messages_shown_to(viewer, inbox).order_by().aggregate(
        read=Count("pk", filter=Q(received_at__lte=mark)), total=Count("pk"))
    return counts["read"], counts["total"]


def _attach_revisions(messages) -> None:
    """Give each of ``messages`` its ``revision_list`` (earlier versions, oldest first) in one query (every reader sees
        every revision)."""
    for m in messages:
        m.revision_list = []
    edited = [m.pk for m in messages if m.edited_at is not None]
    if edited:
        revisions: dict[int, list] = {}
        for rev in MessageRevision.objects.filter(message_id__in=edited).order_by("replaced_at", "id"):
            revisions.setdefault(rev.message_id, []).append(rev)
        for m in messages:
            m.revision_list = revisions.get(m.pk, [])


@dataclass
class LiveUpdate:
    """The messages of a thread after position ``after`` for one viewer, for a page that stays open."""

    #: ``(position, message)`` pairs, oldest first, at most the limit asked for.
    messages: list[tuple[int, Message]]
    #: New messages beyond the limit (the page should offer the newest page instead of appending them all).
    more: int
    #: Whether showing these may advance the viewer's read mark (nothing unread lies before them).
    marks_read: bool
    #: Whether any of them was unread (received after the read mark); when none was, nothing is written.
    shows_unread: bool = True


def thread_updates_for(viewer, inbox: Inbox, after: int, limit: int) -> LiveUpdate:
    """The messages of ``inbox`` at positions ``after + 1 ..`` (1-based thread order: received_at, id), at most
    ``limit``, for a ``viewer`` who may read it (call ``access_inbox_by_id`` first), with their revisions, and
    how many more there are. A constant number of queries whatever the thread's length (the inbox's post hook
    adds its own constant number, ``inboxes.hooks.annotate_messages``)."""
    rows = list(_for_display(messages_shown_to(viewer, inbox)).order_by("received_at", "id")[after:after + limit + 1])
    shown = rows[:limit]
    _attach_revisions(shown)
    annotate_messages(inbox, shown)
    more = 0
    if len(rows) > limit:
        more = messages_shown_to(viewer, inbox).count() - after - limit
    counts = _read_counts(viewer, inbox)
    marks_read = counts is not None and counts[0] >= after
    shows_unread = counts is None or after + len(shown) > counts[0]
    return LiveUpdate(messages=[(after + 1 + i, m) for i, m in enumerate(shown)], more=more, marks_read=marks_read,
                      shows_unread=shows_unread)


def thread_page_for(viewer, inbox: Inbox, page_number: str | int | None) -> ThreadPage:
    """Page ``page_number`` (1-based; "last" or anything not a positive number = the newest page) of
    ``inbox``'s messages, oldest first,
    for a ``viewer`` who may read it (call ``access_inbox_by_id`` first). With no page (None) the thread opens
    at the viewer's first unread message, or at the newest page when nothing is unread. An out-of-range number
    gives the last page. Also returns the inbox's members (not the removed), whether the viewer may
    see hidden texts, the first unread position and whether this page may advance the read mark (it must not
    skip an unread message). A constant number of queries whatever the thread's length.
    """
    messages = _for_display(messages_shown_to(viewer, inbox)).order_by("received_at", "id")
    paginator = Paginator(messages, settings.MAFIA_MESSAGES_PER_PAGE)
    counts = _read_counts(viewer, inbox)
    first_unread = None
    if counts is not None:
        read, total = counts
        paginator.__dict__["count"] = total  # the paginator's own COUNT(*), already known
        first_unread = read + 1 if total > read else None
    if page_number is None and first_unread is not None:
        page_number = (first_unread - 1) // settings.MAFIA_MESSAGES_PER_PAGE + 1
    try:
        page_number = int(page_number)
    except (TypeError, ValueError):
        page_number = paginator.num_pages  # None, "last" or garbage: the newest page
    if page_number < 1:
        page_number = paginator.num_pages
    page = _newest_page(paginator, messages) if page_number >= paginator.num_pages else paginator.get_page(page_number)
    page.object_list = list(page.object_list)
    _attach_revisions(page.object_list)
    annotate_messages(inbox, page.object_list)
    # The member list shows names and bans only: no resident's other columns (a city's inbox lists ~200 seats).
    members = Membership.objects.filter(inbox=inbox).exclude(state=MembershipState.REMOVED)
    cutoff = policies.message_cutoff(viewer, inbox)
    if cutoff is not None:  # a dead viewer knows the members of the moment of death
        members = members.filter(since__lte=cutoff)
    members = list(members.select_related("resident").only("inbox_id", "state", "banned_until", "resident__name")
                   .order_by("resident__name")) if knowledge.can_see_members(viewer, inbox) else []
    marks_read = first_unread is None or (page.start_index() or 1) <= first_unread
    # The first ``read`` messages in thread order are exactly those received at or before the read mark, so a
    # page ending at or before position ``read`` shows nothing the mark does not already cover.
    shows_unread = counts is None or page.end_index() > counts[0]
    return ThreadPage(page=page, show_hidden_text=moderation_policy.can_see_hidden_text(viewer, inbox), members=members,
                      first_unread=first_unread, marks_read=marks_read, shows_unread=shows_unread)


def _newest_page(paginator: Paginator, messages: QuerySet) -> Page:
    """The newest page of ``paginator`` read by keyset, not by OFFSET: its messages are the thread's last ones,
    so they are read backwards along the (inbox, received_at, id) index and put back in order. The page holds
    what a page-numbered read would (pages are counted from the oldest message)."""
    per_page = paginator.per_page
    number = paginator.num_pages
    size = paginator.count - (number - 1) * per_page
    newest = list(messages.reverse()[:size]) if size > 0 else []
    newest.reverse()
    return Page(newest, number, paginator)


def latest_message_time(viewer, inbox: Inbox) -> datetime | None:
    """The receive time (aware UTC) of the newest message of ``inbox`` that ``viewer`` reads
    (``messages_shown_to``), or None when there is none. One query."""
    return (messages_shown_to(viewer, inbox).order_by("-received_at", "-id")
            .values_list("received_at", flat=True).first())


def messages_by_resident_for(viewer, resident, limit: int = 10) -> QuerySet[Message]:
    """The latest ``limit`` messages written from ``resident``'s seat that ``viewer`` may read,
    newest first, with their inbox loaded."""
    qs = Message.objects.filter(author_resident=resident, inbox__game=resident.game_id, is_hidden=False)
    return policies.readable_messages(viewer, qs).select_related("inbox").order_by("-received_at", "-id")[:limit]


def message_at_position(inbox: Inbox, position, viewer=None) -> Message:
    """The message at 1-based ``position`` in ``inbox``'s thread order (received_at, id) among those ``viewer``
    reads (``messages_shown_to``; every message when None, for staff pages), for a viewer who may read the inbox
    (call ``access_inbox_by_id`` first). Pages address messages by position, never by their global id. Raises Http404
    for a malformed or out-of-range position."""

    raw = str(position)
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 9):  # no sign, no other script's digits, in range
        raise Http404("No such message.")
    position = int(raw)
    if position < 1:
        raise Http404("No such message.")
    shown = Message.objects.filter(inbox=inbox) if viewer is None else messages_shown_to(viewer, inbox)
    message = (shown.select_related("inbox__game")
               .order_by("received_at", "id")[position - 1:position].first())
    if message is None:
        raise Http404("No such message.")
    return message


def chain_links_for(viewer, inbox: Inbox) -> tuple[Inbox | None, Inbox | None]:
    """(predecessor, successor) of a rolled-over ``inbox``, each only when ``viewer`` may
    read it (a judge new to the court gets no link to the old court). No query for an inbox that was
    never rolled over."""
    predecessor = successor = None
    if inbox.predecessor_id is not None:
        candidate = Inbox.objects.select_related("game").filter(pk=inbox.predecessor_id).first()
        if candidate is not None and policies.can_read_inbox(viewer, candidate):
            predecessor = candidate
    if inbox.rolled_over_at is not None:
        candidate = Inbox.objects.select_related("game").filter(predecessor=inbox).first()
        if candidate is not None and policies.can_read_inbox(viewer, candidate):
            successor = candidate
    return predecessor, successor


def stale_post_form(game=None) -> InvalidInput:
    """The refusal of a post whose form key was already used for another text or inbox (nothing is stored), citing
    the rule of ``game``'s ruleset when given."""
    return InvalidInput(_("This form was already used to post another message, so nothing was posted. Your text is "
                          "kept: send it again to post it."), rule=rule_id(game, "message_edit"))


def post_of_form_key(user, inbox: Inbox, text: str, key: str | None) -> Message | None:
    """The message ``user`` already posted with the form key ``key`` when it is the same post (same inbox, same
    text: a double click, a network retry), else None (no key, an anonymous user, the key unused). The message
    comes with its inbox. Raises ``InvalidInput`` (``stale_post_form``) when the key was used for another text or inbox: a
    stale form, refused rather than answered as a success that stored nothing."""
    if not key or user is None or not user.is_authenticated:
        return None
    already = Message.objects.filter(author_user=user, idempotency_key=key).select_related("inbox").first()
    if already is None:
        return None
    if already.inbox_id != inbox.pk or already.body != text:
        raise stale_post_form(inbox.game)
    return already
