"""The game as data for the JSON export and the printable page: exactly what the viewer may read.

Inboxes come from ``readable_inboxes``, messages from ``readable_messages``, residents' alignments and roles
through the knowledge matrix (``visible_alignment``, ``knows_seat_role``), public positions from the game's
ruleset (``public_seat_roles``), staff through
``visible_staff``. Hidden messages carry no text unless the viewer moderates the inbox.
"""
from __future__ import annotations

from typing import Any

from cities.models import City, Game, PublicPost, Resident
from inboxes import knowledge, moderation_policy, policies
from inboxes.models import Message
from kernel.rulesets import ruleset_of, seat_state_relations

from .selectors import winner_of


def export_for(viewer, game: Game) -> dict[str, Any]:
    """``{"game": {...}, "cities": [...], "staff": [...], "residents": [...], "posts": [...], "inboxes":
    [{"id", "kind", "title", "city", "day", "messages": [{"author", "at", "text", "hidden"}]}]}``, times as ISO
    8601 UTC; an inbox's ``id`` is its opaque public id (a database id would count the inboxes not exported). ``winner`` only after the end. Query count independent of the number of messages."""
    finished = game.status == "finished"
    residents = list(Resident.objects.filter(game=game).select_related("city", "game", *seat_state_relations())
                     .order_by("city__number", "name"))
    spec = ruleset_of(game)
    if game.lists_published_at is None and not finished:
        residents = []
    inboxes = list(policies.readable_inboxes(viewer, game).select_related("city", "game").order_by("kind", "city__number", "pk"))
    messages = (policies.readable_messages(viewer, Message.objects.filter(inbox__game=game))
                .order_by("inbox_id", "received_at", "id"))
    moderated = {i.pk for i in inboxes if not finished and moderation_policy.can_see_hidden_text(viewer, i)}
    by_inbox: dict[int, list[dict]] = {i.pk: [] for i in inboxes}
    for m in messages:
        hidden_text = m.is_hidden and m.inbox_id not in moderated
        by_inbox.setdefault(m.inbox_id, []).append({
            "author": m.author_name, "at": m.received_at.isoformat(),
            "text": "" if hidden_text else m.body, "hidden": m.is_hidden})
    data: dict[str, Any] = {
        "game": {"slug": game.slug, "title": game.title, "status": game.status, "day": game.day_number,
                 "ended_at": game.ended_at.isoformat() if game.ended_at else None},
        "cities": [{"number": c.number, "name": c.name} for c in City.objects.filter(game=game).order_by("number")],
        "staff": [{"kind": r.kind, "city": r.city.number if r.city else None, "user": r.user.public_name}
                  for r in knowledge.visible_staff(viewer, game)],
        "residents": [{"name": r.name, "city": r.city.number if r.city else None, "status": r.status,
                       "alignment": knowledge.visible_alignment(viewer, r),
                       **{role.key: knowledge.knows_seat_role(viewer, r, role) for role in spec.seat_roles},
                       "positions": [key for key, _label in spec.public_seat_roles(r)]} for r in residents],
        "posts": [{"kind": p.kind, "title": p.title, "at": p.published_at.isoformat(), "text": p.body}
                  for p in PublicPost.objects.filter(game=game, published_at__isnull=False).order_by("published_at")],
        "inboxes": [{"id": i.public_id, "kind": i.kind, "title": i.title, "city": i.city.number if i.city else None,
                     "day": i.day_number, "messages": by_inbox.get(i.pk, [])} for i in inboxes],
    }
    if finished:
        data["game"]["winner"] = winner_of(game, residents)
    return data
