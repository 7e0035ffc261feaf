"""The post-hook registry (DESIGN.md "Rulesets and layers"): what a ruleset does with a message posted in an inbox
of a given kind (a voting inbox counts its votes, a precinct takes a ballot, a game thread parses ``##VOTE``). The scheduler's handler table (``cities.scheduler.HANDLERS``) is the model.

``inboxes.posting.do_post_message`` calls, inside its transaction and with the inbox row locked:
0. ``hook.locked_reads()``: annotations that the statement locking the poster's membership of the inbox
   (``policies.lock_for_post``) reads as well, so that ``check`` needs no statement of its own under the lock
   (that statement reads those of the hooks of the rulesets of the games where the poster holds a seat,
   ``hooks_of_rulesets``, since the inbox's kind is known only once it is read: names must not clash, and reads of
   another kind's inbox are ignored; another ruleset's hooks are never read);
   their values reach ``check`` as ``seat.locked_reads`` (``(inbox id, {name: value})``; absent when the poster
   has no membership there);
1. ``hook.check(inbox, seat, text, now)`` before the message is stored: return a value describing what the post
   does (passed on to ``record``), or raise a ``RuleViolation`` to refuse the post (nothing is stored);
2. ``hook.writes(inbox, seat, message, accepted, now)``: the hook's index rows as statements (``HookWrites``) that
   go in the post's last round trip with the message itself, the poster's read mark and the audit row (a vote's
   standing-vote row: the hot path). ``message.pk`` is set (reserved) but the row may not exist yet. The default,
   None, has ``record`` called instead:
3. ``hook.record(inbox, seat, message, accepted, now)`` once the ``Message`` row exists: index what it did
   (a standing vote, a ballot). Raising here rolls the whole post back.
``seat`` is the author's ``Resident`` when a member posts, None for a staff post. Hooks change state only through
their own app's rows and services; they never read the clock (``now`` is the message's receive time).

A thread page asks ``hook.thread_box(viewer, inbox)`` for what it shows above the messages (a voting inbox's
standing tally), rendered by the hook's ``thread_box_template`` (as ``tally``; the live poll renders it again), and
includes the hook's ``thread_head_template`` (with the page's context; a game thread's live vote count, say), and
(``inboxes.selectors``) calls ``hook.annotate(inbox, messages)`` with the messages it shows, so that the hook attaches
what it recorded beside each one (a game thread's receipt: ``receipt_lines``, rendered by its ``receipt_template``)
in a constant number of queries, never one per message. The templates are the ruleset's own: the engine names none.

A ruleset registers its hooks when its app is ready, e.g. in its ``hooks.py`` (a toy ruleset "dice")::

    @post_hook(DiceInboxKind.TABLE, ruleset="dice")     # a kind of the ruleset's own (its kinds.py)
    class RollHook(PostHook):
        receipt_template = "dice/_roll.html"

        def check(self, inbox, seat, text, now): ...
        def record(self, inbox, seat, message, accepted, now): ...

A hook registered with ``ruleset=None`` applies to that inbox kind in every game; one registered for a ruleset key
applies to that ruleset's games and wins over the former.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kernel.errors import RuleViolation
from kernel.prepared import Statement


@dataclass(frozen=True)
class HookWrites:
    """A hook's writes for one post (``PostHook.writes``): ``statements`` run last, after the message's own rows,
    in one round trip; when ``refusal`` is set and the last statement changes no row (an insert that met a unique
    constraint, ``ON CONFLICT DO NOTHING``; an update that found nothing), ``refusal`` is raised and the whole post
    rolls back."""

    statements: tuple[Statement, ...]
    refusal: RuleViolation | None = None


class PostHook:
    """What happens when a message is posted in an inbox of one kind. Override ``check`` and/or ``record``; the
    defaults accept every post and record nothing.

    The thread page's templates of the hook's ruleset (names of its own, "" for none): ``thread_box_template``
    renders what ``thread_box`` returns (as ``tally``), ``thread_head_template`` is included above the messages
    with the page's context, ``receipt_template`` renders a message's ``receipt_lines`` (as ``receipt``, with
    ``edited``)."""

    thread_box_template: str = ""
    thread_head_template: str = ""
    receipt_template: str = ""

    def locked_reads(self) -> dict[str, Any]:
        """Annotations of the ``Membership`` row locked for the post (name -> expression over the membership,
        its ``inbox`` and its ``resident``; a ``FilteredRelation`` before the names that use it; names of this
        hook's own, as every hook's are read by the same statement). The default reads nothing."""
        return {}

    def check(self, inbox, seat, text: str, now: datetime) -> Any:
        """Decide the post before it is stored: return what it does, or raise a ``RuleViolation``."""
        return None

    def writes(self, inbox, seat, message, accepted: Any, now: datetime) -> HookWrites | None:
        """The index rows of ``message`` (its ``pk`` set, the row written in the same round trip) as statements,
        or None to have ``record`` called once the message is stored (the default)."""
        return None

    def record(self, inbox, seat, message, accepted: Any, now: datetime) -> None:
        """Index the stored ``message`` given what ``check`` returned (``accepted``)."""

    def thread_box(self, viewer, inbox) -> Any:
        """What the thread page of ``inbox`` shows above its messages to ``viewer`` (who reads ``inbox``: the caller
        checked), e.g. a voting inbox's standing tally; None (the default) shows nothing."""
        return None

    def annotate(self, inbox, messages: list) -> None:
        """Attach to each of ``messages`` (of ``inbox``, about to be shown) what the page shows beside it, in a
        constant number of queries. The default attaches nothing."""


#: (ruleset key or None, inbox kind) -> the hook.
POST_HOOKS: dict[tuple[str | None, str], PostHook] = {}


def register_post_hook(kind: str, hook: PostHook, *, ruleset: str | None = None) -> PostHook:
    """Register ``hook`` for messages posted in inboxes of ``kind`` (of games of ``ruleset``, or of every game when
    None); a later registration for the same key replaces the earlier one. Returns the hook."""
    POST_HOOKS[(ruleset, str(kind))] = hook
    return hook


def post_hook(kind: str, *, ruleset: str | None = None):
    """Class decorator: register an instance of the decorated ``PostHook`` subclass (see ``register_post_hook``)."""
    def register(cls: type[PostHook]) -> type[PostHook]:
        register_post_hook(kind, cls(), ruleset=ruleset)
        return cls
    return register


def hooks_of_rulesets(rulesets) -> tuple[PostHook, ...]:
    """The registered hooks that may serve a post in a game of one of ``rulesets`` (ruleset keys): those registered
    for one of them and those for every ruleset, in registration order. A post reads only these hooks'
    ``locked_reads``: never another ruleset's."""
    keys = set(rulesets)
    return tuple(hook for (ruleset, _kind), hook in POST_HOOKS.items() if ruleset is None or ruleset in keys)


def post_hook_for(inbox) -> PostHook | None:
    """The hook for a post in ``inbox`` (its game's ruleset's, else the kind's general one), or None."""
    return POST_HOOKS.get((inbox.game.ruleset, inbox.kind)) or POST_HOOKS.get((None, inbox.kind))


def annotate_messages(inbox, messages: list) -> None:
    """Let the hook of ``inbox`` attach its records to ``messages`` (a list about to be shown); each message gets
    ``receipt_lines`` ([] unless the hook sets them) and ``receipt_template`` (the hook's, "" without a hook)."""
    hook = post_hook_for(inbox)
    template = hook.receipt_template if hook is not None else ""
    for message in messages:
        message.receipt_lines = []
        message.receipt_template = template
    if hook is not None and messages:
        hook.annotate(inbox, messages)
