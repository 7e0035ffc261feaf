"""The staff kinds of a game, as its ruleset registers them. The engine knows one kind of its own, the game's host
(``HOST_STAFF_KIND``, stored as "procurator"; each ruleset names it: a Procurator, a Host); every other
kind, its label and its powers are the ruleset's (``RulesetSpec.staff_kinds``: value -> lazily translated label;
the tables of ``STAFF_TABLES`` in its ``policy_grants``). A ruleset that declares no table has none (a ruleset
inherits no other's).

The tables (``policy_grants`` keys, each a tuple of staff kind values):

- ``city_staff_kinds``: kinds held for one city of the game (appointed with a city, one per city; the only kinds
  with a ``StaffRole.city``, so a role with a city is a city's role); their holder runs that city (its inboxes by
  the ``"staff"`` grants, its day, its proxies), may be stood in for by another holder of the kind and sees the
  city's audit rows.
- ``court_staff_kinds``: kinds that run the game's court: renew it, impose penalty bans, see the nominations, a
  complaint of no confidence is made about them, and they read the audit rows the host and the court read.
- ``secret_staff_kinds``: kinds whose holder is a secret while the game runs (the knowledge matrix): known only to
  the host, to holders of these kinds and to the mafia; listed, named in the audit log and shown as an actor only
  to them; such a holder opens no secret inbox.
- ``night_staff_kinds``: kinds that know every alignment and the night business of every city (the night page,
  its decisions), confirm the mafia's acknowledgements, are the object of the mafia's complaint of no confidence
  and read the audit rows of the night.
- ``cohost_staff_kinds``: kinds that host the game beside the host (co-hosts): what the ruleset lets "the
  hosts" do, they do (know alignments when ``hosts_know_alignments``, moderate as the host).
"""
from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _

from kernel.rulesets import get_ruleset, registered_rulesets

#: The game's host, the engine's one staff kind (stored value; its label is each ruleset's).
HOST_STAFF_KIND = "procurator"

#: The longest staff kind value ``StaffRole.kind`` stores (a ruleset's kind must fit: ``mafia_site.checks``).
STAFF_KIND_MAX_LENGTH = 12

#: The per-kind tables a ruleset may declare in its ``policy_grants`` (see the module docstring).
STAFF_TABLES = frozenset({"city_staff_kinds", "court_staff_kinds", "secret_staff_kinds", "night_staff_kinds",
                          "cohost_staff_kinds"})


def _spec(game):
    return get_ruleset(game if isinstance(game, str) else game.ruleset)


def staff_kinds_of(game, table: str) -> frozenset[str]:
    """The staff kinds the ruleset of ``game`` (anything with a ``ruleset`` key, or the key itself) declares in the
    table ``table`` of its ``policy_grants``; empty when it declares none. No query. Raises ``ValueError`` for a
    table not in ``STAFF_TABLES`` and ``UnknownRuleset`` for a ruleset that is not registered."""
    if table not in STAFF_TABLES:
        raise ValueError(f"unknown staff table {table!r}")
    return frozenset(_spec(game).policy_grants.get(table, ()))


def hosts_of(game) -> frozenset[str]:
    """The host kind and the ruleset's co-host kinds (``cohost_staff_kinds``) of ``game``'s ruleset. No query."""
    return frozenset({HOST_STAFF_KIND}) | staff_kinds_of(game, "cohost_staff_kinds")


def staff_kinds_anywhere(table: str) -> frozenset[str]:
    """The union of the table ``table`` over every registered ruleset: for lists that span the games of several
    rulesets (a staff member's console), filtered per game afterwards. Raises ``ValueError`` as ``staff_kinds_of``."""
    return frozenset().union(*(staff_kinds_of(key, table) for key in registered_rulesets()))


def staff_kind_label(game, kind: str) -> str:
    """The label of the staff kind ``kind`` as the ruleset of ``game`` names it (in the active language); the
    kind itself when the ruleset declares no such kind. No query."""
    return str(_spec(game).staff_kinds.get(kind, kind))


def host_label(game) -> str:
    """The label the ruleset of ``game`` gives the game's host (``HOST_STAFF_KIND``: a Procurator, a Host), in the
    active language, for the engine's sentences that name the host. No query."""
    return staff_kind_label(game, HOST_STAFF_KIND)


def hosts_label(game) -> str:
    """``host_label(game)``, or "the host or co-host" when the ruleset of ``game`` declares co-host kinds
    (``cohost_staff_kinds``): for the engine's refusals of what a co-host does as the host does. No query."""
    beside = staff_labels(game, "cohost_staff_kinds")
    if not beside:
        return host_label(game)
    return str(_("%(host)s or %(cohost)s")) % {"host": host_label(game), "cohost": " / ".join(beside)}


def staff_labels(game, table: str) -> list[str]:
    """The labels (active language) of the staff kinds of the table ``table`` of ``game``'s ruleset, in the order
    its ``staff_kinds`` declares them; [] when the table is empty. No query. Raises ``ValueError`` as
    ``staff_kinds_of``."""
    kinds = staff_kinds_of(game, table)
    return [str(label) for kind, label in _spec(game).staff_kinds.items() if kind in kinds]


def staff_kind_problems() -> list[str]:
    """What is wrong with the staff kinds the registered rulesets declare, one sentence each ([] when nothing): a
    ruleset without the host kind, a value longer than ``StaffRole.kind`` stores, a staff table or a grant naming a
    kind its ruleset does not declare. Read by the system checks (``mafia_site.checks``). No query."""
    problems = []
    for key, spec in registered_rulesets().items():
        declared = set(spec.staff_kinds)
        if HOST_STAFF_KIND not in declared:
            problems.append(f"ruleset {key!r} declares no host staff kind ({HOST_STAFF_KIND!r})")
        problems += [f"ruleset {key!r}: staff kind {kind!r} is longer than {STAFF_KIND_MAX_LENGTH} characters"
                     for kind in sorted(declared) if len(kind) > STAFF_KIND_MAX_LENGTH]
        named = {(table, kind) for table in sorted(STAFF_TABLES) for kind in staff_kinds_of(key, table)}
        named |= {("staff", kind) for kind in spec.policy_grants.get("staff", {})}
        problems += [f"ruleset {key!r}: {table} names {kind!r}, which it does not declare in staff_kinds"
                     for table, kind in sorted(named) if kind not in declared]
    return problems


def staff_kind_choices() -> list[tuple[str, Any]]:
    """(value, label) of every staff kind a registered ruleset declares, the first label of a value declared by
    several (the host's is the first ruleset's): the choices of ``StaffRole.kind`` (a callable, so a ruleset's
    new kind needs no migration)."""
    choices: dict[str, Any] = {}
    for spec in registered_rulesets().values():
        for kind, label in spec.staff_kinds.items():
            choices.setdefault(kind, label)
    return list(choices.items())
