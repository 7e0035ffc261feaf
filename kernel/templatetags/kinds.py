"""Template filters for the typed kinds: ``{{ event.kind|scheduled_kind }}`` -> "the close of the voting"."""
from __future__ import annotations

from django import template

from kernel.events import scheduled_label

register = template.Library()


@register.filter
def scheduled_kind(kind: str) -> str:
    """A ScheduledEvent kind in words, in the active language (``kernel.events.scheduled_label``)."""
    return scheduled_label(str(kind))
