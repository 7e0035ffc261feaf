"""System checks of the inboxes app: every inbox kind a registered ruleset defines fits ``Inbox.kind``."""
from __future__ import annotations

from django.core import checks

from kernel.rulesets import known_inbox_kind_choices


@checks.register(checks.Tags.models)
def check_inbox_kinds_fit(app_configs=None, **kwargs) -> list[checks.Error]:
    """An error (``inboxes.E001``) for each registered inbox kind longer than ``Inbox.kind``'s ``max_length``."""
    from .models import Inbox

    limit = Inbox._meta.get_field("kind").max_length
    return [checks.Error(f"The inbox kind {value!r} is longer than {limit} characters, the size of Inbox.kind.",
                         hint="Give the kind a shorter value in its ruleset's inbox_kind_choices.",
                         obj=Inbox, id="inboxes.E001")
            for value, _label in known_inbox_kind_choices() if len(value) > limit]
