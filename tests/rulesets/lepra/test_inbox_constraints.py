"""Lepra's rules on the shared inbox table stand in the database (``rulesets.lepra.inbox_constraints``), on SQLite
and on PostgreSQL alike: one current personal inbox per resident and a personal inbox about its resident (L-INBOX-5),
one current mafia inbox per city (L-INBOX-4), the per-city kinds have their city (L-INBOX-1, L-INBOX-9). A row that
breaks one is an ``IntegrityError`` naming the rule; another ruleset's kinds are not bound by them."""
from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from inboxes.models import Inbox
from rulesets.lepra import inbox_constraints
from rulesets.lepra.kinds import LepraInboxKind
from tests.conftest import DEMO_NOW
from tests.rulesets.m21.day_helpers import build_game

pytestmark = pytest.mark.django_db


def _refused(rule: str, write) -> None:
    """``write`` fails with an ``IntegrityError`` naming ``rule`` (SQLite names a unique index by its column)."""
    with pytest.raises(IntegrityError) as refusal, transaction.atomic():
        write()
    if connection.vendor == "sqlite" and rule in inbox_constraints.UNIQUE_CURRENT:
        column = inbox_constraints.UNIQUE_CURRENT[rule][0]
        assert str(refusal.value) == f"UNIQUE constraint failed: inboxes_inbox.{column}"
    elif connection.vendor == "sqlite":
        assert str(refusal.value) == f"CHECK constraint failed: {rule}"
    else:
        assert f'"{rule}"' in str(refusal.value)


def _current(demo, kind: str, **fields):
    return Inbox.objects.filter(game=demo.game, kind=kind, rolled_over_at__isnull=True, **fields).get()


def test_one_current_personal_inbox_per_resident_about_its_resident_L_INBOX_5(demo):
    honest = demo.seat("honest")
    personal = _current(demo, LepraInboxKind.PERSONAL, resident=honest)
    _refused("inbox_one_personal_per_resident", lambda: Inbox.objects.create(
        game=demo.game, kind=LepraInboxKind.PERSONAL, city=honest.city, resident=honest, title="Second",
        created_at=DEMO_NOW))
    _refused("inbox_personal_has_resident", lambda: Inbox.objects.create(
        game=demo.game, kind=LepraInboxKind.PERSONAL, city=honest.city, title="Nobody's", created_at=DEMO_NOW))
    _refused("inbox_personal_has_resident",
             lambda: Inbox.objects.filter(pk=personal.pk).update(resident=None))
    # Rolled over, the old one leaves room for its successor.
    Inbox.objects.filter(pk=personal.pk).update(rolled_over_at=DEMO_NOW)
    successor = Inbox.objects.create(game=demo.game, kind=LepraInboxKind.PERSONAL, city=honest.city, resident=honest,
                                     title="Next", created_at=DEMO_NOW, predecessor=personal)
    assert _current(demo, LepraInboxKind.PERSONAL, resident=honest) == successor


def test_one_current_mafia_inbox_per_city_L_INBOX_4(demo):
    mafia = _current(demo, LepraInboxKind.MAFIA, city__number=1)
    _refused("inbox_one_mafia_per_city", lambda: Inbox.objects.create(
        game=demo.game, kind=LepraInboxKind.MAFIA, city=mafia.city, title="Second", created_at=DEMO_NOW))
    Inbox.objects.filter(pk=mafia.pk).update(rolled_over_at=DEMO_NOW)
    Inbox.objects.create(game=demo.game, kind=LepraInboxKind.MAFIA, city=mafia.city, title="Next", created_at=DEMO_NOW)
    assert Inbox.objects.filter(game=demo.game, kind=LepraInboxKind.MAFIA, city=mafia.city).count() == 2


def test_the_per_city_kinds_have_their_city_L_INBOX_1(demo):
    for kind in inbox_constraints.CITY_KINDS:
        resident = demo.seat("honest") if kind == LepraInboxKind.PERSONAL else None
        _refused("inbox_city_kinds_have_city", lambda: Inbox.objects.create(
            game=demo.game, kind=kind, resident=resident, title="Cityless", created_at=DEMO_NOW))
    city = Inbox.objects.filter(game=demo.game, kind=LepraInboxKind.CITY).first()
    _refused("inbox_city_kinds_have_city", lambda: Inbox.objects.filter(pk=city.pk).update(city=None))
    # The game-wide kinds need none.
    notary = Inbox.objects.create(game=demo.game, kind=LepraInboxKind.NOTARY, title="Draw", created_at=DEMO_NOW)
    assert notary.city_id is None


def test_another_rulesets_kinds_are_not_bound_and_installing_again_changes_nothing(demo):
    table = build_game(slug="m21-rules-free")
    Inbox.objects.create(game=table.game, kind="role_pm", title="Cityless PM", created_at=DEMO_NOW)
    inbox_constraints.install(connection)  # present already: nothing added, nothing refused
    _refused("inbox_one_mafia_per_city", lambda: Inbox.objects.create(
        game=demo.game, kind=LepraInboxKind.MAFIA, city=_current(demo, LepraInboxKind.MAFIA, city__number=2).city,
        title="Second", created_at=DEMO_NOW))


def _installed() -> set[str]:
    """The rules' indexes, checks and triggers present on the inbox table."""
    with connection.cursor() as cursor:
        names = set(connection.introspection.get_constraints(cursor, inbox_constraints.TABLE))
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = %s",
                           [inbox_constraints.TABLE])
            names |= {row[0] for row in cursor.fetchall()}
    return names & {*inbox_constraints.UNIQUE_CURRENT, *inbox_constraints.CHECKS,
                    *(f"{name}_{event}" for name in inbox_constraints.CHECKS for event in ("insert", "update"))}


def test_a_migrate_that_finds_them_gone_installs_them_again(demo):
    """A later migration that remakes the table on SQLite drops them; ``post_migrate`` puts them back."""
    everything = _installed()
    assert len(everything) == (6 if connection.vendor == "sqlite" else 4)
    if connection.vendor == "postgresql":
        # The demo's rows were written in this test's transaction: their deferred foreign-key checks would forbid
        # altering the table (a migrate runs with none pending).
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    inbox_constraints.uninstall(connection)
    assert _installed() == set()
    inbox_constraints.ensure_after_migrate(None, using=connection.alias)
    assert _installed() == everything
    mafia = _current(demo, LepraInboxKind.MAFIA, city__number=3)
    _refused("inbox_one_mafia_per_city", lambda: Inbox.objects.create(
        game=demo.game, kind=LepraInboxKind.MAFIA, city=mafia.city, title="Second", created_at=DEMO_NOW))
