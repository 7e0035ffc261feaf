"""Helpers of the inbox tests: filling an inbox with messages."""
from __future__ import annotations

from datetime import timedelta

from inboxes.models import Inbox, Message
from inboxes.rendering import render_markdown


def _fill(inbox: Inbox, author_seat, total: int) -> None:
    """Bring ``inbox`` to ``total`` messages (test data, written directly)."""
    have = Message.objects.filter(inbox=inbox).count()
    last = Message.objects.filter(inbox=inbox).order_by("-received_at").values_list("received_at", flat=True).first()
    rows = [
        Message(inbox=inbox, author_user=author_seat.user, author_resident=author_seat, author_name=author_seat.name,
                body=f"message {i}", body_html=render_markdown(f"message {i}"), received_at=last + timedelta(seconds=i + 1))
        for i in range(total - have)
    ]
    Message.objects.bulk_create(rows, batch_size=500)
    assert Message.objects.filter(inbox=inbox).count() == total
