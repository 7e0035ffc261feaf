"""The access policy's tables by inbox kind, as each ruleset declares them: what each kind allows after the game, to
whom, and where a seat that is not living may still post. Each table is a set of the ruleset's inbox kinds (staff
kinds for ``secret_organizers`` and ``secret_barred_staff``) in the ruleset's ``policy_grants``, read for that ruleset's games only through
``kinds_of``; a ruleset that declares none has none (a ruleset inherits no other's). Read by ``inboxes.policies``,
the inbox services and the staff pages.

The tables (``policy_grants`` keys):

- ``consent_after_game``: kinds disclosed after the game only with consent (per person, revocable until given): an
  inbox about a seat (a personal inbox, a role PM) with its resident's consent, one of an ``organized_kinds`` kind (a
  secret inbox) once the last of its members (and its staff organizer) consents (``inboxes.disclosure_consent``).
  Once disclosed they are public, visitors included.
- ``secret_organizers``: the staff kinds that may organise a secret inbox, the preferred first (``ranked_kinds``: a
  holder of several organises as the first); its staff organizer reads and posts there
  (``policies._secret_organizer_roles``); nobody else's role gives access to one.
- ``penalty_ban_kinds``: kinds where a penalty ban (a resident banned in named inboxes for a given time) may apply:
  only kinds whose membership is no secret (a refusal "not in this inbox" must tell nobody who is in a hidden one).
- ``secret_member_kinds``: kinds whose member list only their members see while the game runs; staff are never
  members, so no staff page lists them (``knowledge.can_see_members``, the staff console's memberships).
- ``dated_kinds``: kinds whose content a death leaves the seat in, as it was at its death (knowledge is dated):
  while the game runs a dead seat reads one only through a membership it held at its death (``since`` <=
  ``died_at``) and only the messages received up to its death, in all four forms.
- ``vote_only_kinds``: kinds where only those who vote there post; staff read them but speak elsewhere.
- ``dead_post_kinds`` / ``imprisoned_post_kinds``: where a dead or an imprisoned seat may still post; everywhere else
  its memberships read at most, whatever a moderator sets (DESIGN.md "State decides, flags don't"). A ruleset's
  special states of a seat out of play have their own grants (``policy_grants["seat_states"]``).
- ``no_rollover_kinds``: kinds never rolled over; ``rollover_keeps_dead_kinds``: kinds whose rollover does not ban
  the dead (they are the members there, or chosen speakers).
- ``immutable_kinds``: kinds whose messages are never edited or deleted; every other kind is a discussion inbox.
- ``unnamed_author_kinds``: kinds whose pages never name a message's author (a role stands for the person);
  ``night_page_kinds``: kinds whose pages link to the game's night page; ``nomination_link_kinds``: kinds whose
  page links its member to the nomination page; ``leavable_kinds``: kinds a member may leave (``inboxes.page_policy``,
  ``inboxes.services.do_leave_inbox``).
- ``organized_kinds``: kinds whose staff organizer (``Inbox.organizer``, of a ``secret_organizers`` kind) reads and
  posts there and consents to their disclosure; in any other kind the organizer's role reads by its grants only.
- ``draw_record_kinds``: kinds public after the game when the inbox is a draw's record (``RulesetSpec.draw_record_q``).
- ``secret_barred_staff``: the staff kinds whose holders neither open nor take part in a secret inbox (the
  ruleset's ``inbox_kind_for("secret")``); the refusal is worded by the ruleset (``texts["secret_inbox_barred_staff"]``).
- ``map_hidden_kinds``: kinds the archive's map of a game leaves out (one inbox per seat would crowd it:
  ``archive.charts``).
- ``complaint_page_kinds``: kinds whose members, banned there without an end, write only through the complaint
  page, signed as their city's group, never by name (``policies.post_denial`` says so in the ruleset's text
  ``complaint_page_posting``, which a ruleset declaring such kinds words).
"""
from __future__ import annotations

from django.db.models import Q

from kernel.rulesets import get_ruleset, registered_rulesets

from .models import MembershipState

#: Membership states that let a seat read (banned still reads; removed sees nothing, not even the title). The
#: engine's own: what a membership state means is the same in every ruleset's games.
READING_STATES = (MembershipState.MEMBER, MembershipState.BANNED)

#: The per-kind tables a ruleset may declare in its ``policy_grants`` (see the module docstring).
KIND_TABLES = frozenset({
    "consent_after_game", "secret_organizers", "penalty_ban_kinds", "secret_member_kinds", "dated_kinds",
    "vote_only_kinds", "dead_post_kinds", "imprisoned_post_kinds", "no_rollover_kinds", "rollover_keeps_dead_kinds",
    "immutable_kinds", "unnamed_author_kinds", "night_page_kinds", "nomination_link_kinds", "leavable_kinds",
    "organized_kinds", "draw_record_kinds", "complaint_page_kinds", "secret_barred_staff", "map_hidden_kinds",
})


#: Of ``KIND_TABLES``, those that list staff kinds (``RulesetSpec.staff_kinds`` values), not inbox kinds.
STAFF_KIND_TABLES = frozenset({"secret_organizers", "secret_barred_staff"})


def kinds_of(game, table: str) -> frozenset[str]:
    """The kinds the ruleset of ``game`` (anything with a ``ruleset`` key, or the key itself) declares in the table
    ``table`` of its ``policy_grants``; an empty set when it declares none. No query. Raises ``ValueError`` for a
    table name not in ``KIND_TABLES`` (a typo would silently empty a rule) and ``UnknownRuleset`` for a ruleset that
    is not registered."""
    return frozenset(ranked_kinds(game, table))


def ranked_kinds(game, table: str) -> tuple[str, ...]:
    """The kinds of ``kinds_of(game, table)`` in the order the ruleset declares them, first the preferred (the
    staff role a holder of several organises a secret inbox as). Raises as ``kinds_of`` does."""
    if table not in KIND_TABLES:
        raise ValueError(f"unknown policy table {table!r}")
    return tuple(get_ruleset(game if isinstance(game, str) else game.ruleset).policy_grants.get(table, ()))


def kinds_q(table: str, *, prefix: str = "") -> Q:
    """``Q`` over Inbox (over a model reaching it by ``prefix``, e.g. ``"inbox__"``): an inbox whose kind is in the
    table ``table`` of its game's ruleset (``kinds_of``), for lists that span the games of several rulesets. No
    query to build. Raises ``ValueError`` for a table name not in ``KIND_TABLES``."""
    q = Q(pk__in=[]) if not prefix else Q(**{f"{prefix}pk__in": []})
    for key in registered_rulesets():
        kinds = kinds_of(key, table)
        if kinds:
            q |= Q(**{f"{prefix}game__ruleset": key, f"{prefix}kind__in": sorted(kinds)})
    return q


def kind_labels(game, table: str) -> list[str]:
    """The labels (its ruleset's, in the active language) of the kinds of ``kinds_of(game, table)``, in the
    order of the ruleset's ``inbox_kind_order``, then the kinds it does not name in ``inbox_kind_choices``' order: what a
    refusal names as the kinds a rule allows. No query. Raises as ``kinds_of`` does."""
    kinds = kinds_of(game, table)
    spec = get_ruleset(game if isinstance(game, str) else game.ruleset)
    order = {kind: i for i, kind in enumerate(spec.inbox_kind_order)}
    labels = spec.inbox_kind_labels
    defined = {kind: i for i, kind in enumerate(labels)}
    ranked = sorted(kinds, key=lambda kind: (order.get(kind, len(order)), defined.get(kind, len(defined)), kind))
    return [str(labels.get(kind, kind)) for kind in ranked]
