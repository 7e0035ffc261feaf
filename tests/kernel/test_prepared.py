"""kernel.prepared: a prepared queryset returns what the queryset itself returns, in one statement, and refuses
what it cannot prepare."""
import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction
from django.db.models import Count, Exists, OuterRef, Q
from django.db.transaction import TransactionManagementError
from django.test.utils import CaptureQueriesContext

from cities.models import Resident
from inboxes.models import Inbox, Membership
from rulesets.lepra.kinds import LepraInboxKind
from kernel.prepared import PreparedQuery
from tests.factories import CityFactory, InboxFactory, ResidentFactory

pytestmark = pytest.mark.django_db


def _row(obj, fields):
    return tuple(getattr(obj, f) for f in fields)


@pytest.fixture
def world():
    city = CityFactory()
    other = CityFactory(game=city.game)
    residents = [ResidentFactory(city=city) for _ in range(3)] + [ResidentFactory(city=other)]
    inbox = InboxFactory(game=city.game, city=city, kind=LepraInboxKind.CITY, title="Square", members=residents[:2])
    return city, other, residents, inbox


def test_models_with_select_related_and_annotations_equal_the_querysets(world):
    city, _other, residents, _inbox = world

    def build(game_id, name):
        members = Membership.objects.filter(resident=OuterRef("pk"))
        return (Resident.objects.filter(game_id=game_id).exclude(name=name).select_related("city", "user")
                .annotate(is_member=Exists(members), n=Count("memberships")).order_by("name"))

    query = PreparedQuery(build, ints=("game_id",), strs=("name",))
    for excluded in (residents[0].name, residents[3].name, "nobody"):
        expected = list(build(city.game_id, excluded))
        with CaptureQueriesContext(connection) as queries:
            got = query(game_id=city.game_id, name=excluded)
        assert len(queries) == 1
        assert [_row(r, ("pk", "name", "city_id", "is_member", "n")) for r in got] == \
            [_row(r, ("pk", "name", "city_id", "is_member", "n")) for r in expected]
        assert [r.city.name for r in got] == [r.city.name for r in expected]  # loaded: no query
        assert [r.user.username for r in got] == [r.user.username for r in expected]
        assert len(queries) == 1
    assert query(game_id=city.game_id + 1000, name="x") == []


def test_a_list_is_compiled_per_length_and_constants_stay(world):
    residents = world[2]
    query = PreparedQuery(lambda ids: Resident.objects.filter(pk__in=ids, status="alive").order_by("pk"),
                          int_lists=("ids",))
    assert [r.pk for r in query(ids=[residents[2].pk])] == [residents[2].pk]
    assert [r.pk for r in query(ids=[residents[0].pk, residents[3].pk])] == sorted([residents[0].pk, residents[3].pk])
    assert [r.pk for r in query(ids=[residents[1].pk])] == [residents[1].pk]
    Resident.objects.filter(pk=residents[1].pk).update(status="dead")
    assert query(ids=[residents[1].pk]) == []
    with pytest.raises(ImproperlyConfigured):
        query(ids=[])


def test_a_constant_equal_to_a_placeholder_stays_a_constant(world):
    residents = world[2]
    # 1000 and 2000 are the placeholders' first values: the constant must not be taken for the parameter.
    query = PreparedQuery(lambda pk: Resident.objects.filter(Q(pk=pk) | Q(pk=1000) | Q(pk=2000)).order_by("pk"),
                          ints=("pk",))
    assert [r.pk for r in query(pk=residents[0].pk)] == [residents[0].pk]


def test_values_that_change_the_shape_are_refused(world):
    residents = world[2]
    # None would be IS NULL: refused at the call.
    query = PreparedQuery(lambda pk: Resident.objects.filter(pk=pk), ints=("pk",))
    with pytest.raises(ImproperlyConfigured):
        query(pk=None)
    # A parameter that never reaches the SQL (here: dropped by the builder) is refused when compiled.
    dropped = PreparedQuery(lambda pk: Resident.objects.all(), ints=("pk",))
    with pytest.raises(ImproperlyConfigured):
        dropped(pk=residents[0].pk)


@pytest.mark.django_db(transaction=True)
def test_a_locking_query_runs_only_in_a_transaction(world):
    inbox = world[3]
    query = PreparedQuery(lambda pk: Inbox.objects.select_for_update().filter(pk=pk), ints=("pk",))
    with transaction.atomic():
        assert [i.pk for i in query(pk=inbox.pk)] == [inbox.pk]
    with pytest.raises(TransactionManagementError):
        query(pk=inbox.pk)


@pytest.mark.django_db(transaction=True)
def test_a_query_preceded_by_a_lock_runs_both_in_one_round_trip_and_only_in_a_transaction(world):
    """``preceded_by``: the lock (a ``Statement``, its rows not read) runs first, then the query, whose rows are
    returned; on PostgreSQL in one round trip (prepared in it the first time, executed by name after)."""
    residents, inbox = world[2], world[3]
    lock = PreparedQuery(lambda pk: Inbox.objects.select_for_update(of=("self",)).filter(pk=pk).order_by()
                         .values_list("id"), ints=("pk",))
    query = PreparedQuery(lambda pk: Resident.objects.filter(pk=pk), ints=("pk",))
    with pytest.raises(TransactionManagementError):
        query(preceded_by=[lock.statement(pk=inbox.pk)], pk=residents[0].pk)
    connection.close()
    for resident in residents[:2]:
        with CaptureQueriesContext(connection) as queries, transaction.atomic():
            found = query(preceded_by=[lock.statement(pk=inbox.pk)], pk=resident.pk)
        assert [r.pk for r in found] == [resident.pk]
        sent = [q["sql"] for q in queries if q["sql"] not in ("BEGIN", "BEGIN IMMEDIATE", "COMMIT")]
        if connection.vendor == "postgresql":
            assert len(sent) == 1
            prepared = 2 if resident == residents[0] else 0
            assert sent[0].count("EXECUTE ") == 2 and sent[0].count("PREPARE ") == prepared
            if resident == residents[0]:  # the lock is prepared and executed first
                assert sent[0].index("FOR UPDATE") < sent[0].index('FROM "cities_resident"')
        else:
            assert len(sent) == 2 and "inboxes_inbox" in sent[0]


@pytest.mark.django_db(transaction=True)
def test_a_new_database_session_prepares_the_statement_again(world):
    """A reconnection starts a server session without the prepared statements: the query is prepared again, in
    the same one statement (PostgreSQL; on SQLite the same calls run as plain statements)."""
    residents = world[2]
    query = PreparedQuery(lambda pk: Resident.objects.filter(pk=pk), ints=("pk",))
    assert [r.pk for r in query(pk=residents[0].pk)] == [residents[0].pk]
    connection.close()
    with CaptureQueriesContext(connection) as queries:
        assert [r.pk for r in query(pk=residents[1].pk)] == [residents[1].pk]
        assert [r.pk for r in query(pk=residents[2].pk)] == [residents[2].pk]
    assert len(queries) == 2
    if connection.vendor == "postgresql":
        assert queries[0]["sql"].startswith("PREPARE ") and queries[1]["sql"].startswith("EXECUTE ")


@pytest.mark.django_db(transaction=True)
def test_statements_run_together_write_in_order_in_one_round_trip_and_only_in_a_transaction(world):
    """``execute_together``: the read mark's upsert and an audit row, as the post writes them, land as they would
    one by one; on PostgreSQL in one round trip (prepared in it the first time, executed by name after); outside a
    transaction it refuses and writes nothing."""
    from datetime import UTC, datetime, timedelta

    from cities.models import GameEvent
    from inboxes.models import ReadMark
    from inboxes.read_marks import read_mark_statement
    from kernel.audit import event_statement
    from kernel.prepared import execute_together
    from tests.factories import UserFactory

    inbox, user = world[3], UserFactory()
    first = datetime(2026, 5, 1, 10, 0, tzinfo=UTC)

    def both(at, n):
        return [read_mark_statement(user, inbox, at),
                event_statement(inbox.game, "message.posted", actor=user, at=at, payload={"n": n})]

    connection.close()  # a new database session: nothing prepared in it yet, whatever ran before on this worker
    with pytest.raises(TransactionManagementError):
        execute_together(both(first, 0))
    assert not ReadMark.objects.filter(user=user).exists() and not GameEvent.objects.filter(actor=user).exists()
    for n, at in enumerate((first, first + timedelta(minutes=5), first - timedelta(minutes=5)), start=1):
        with CaptureQueriesContext(connection) as queries, transaction.atomic():
            execute_together(both(at, n))
        sent = [q["sql"] for q in queries if q["sql"] not in ("BEGIN", "BEGIN IMMEDIATE", "COMMIT")]
        if connection.vendor == "postgresql":
            assert len(sent) == 1
            assert sent[0].count("PREPARE ") == (2 if n == 1 else 0) and sent[0].count("EXECUTE ") == 2
        else:
            assert len(sent) == 2
    # The mark moved forward and never back; every audit row was written, in order.
    assert ReadMark.objects.get(user=user, inbox=inbox).last_read_at == first + timedelta(minutes=5)
    assert list(GameEvent.objects.filter(kind="message.posted", actor=user).order_by("id")
                .values_list("payload__n", flat=True)) == [1, 2, 3]


def test_a_reserved_id_inserts_with_the_rows_that_name_it_and_the_last_statement_counts_its_rows(world):
    """``NextId`` reserves a message id on PostgreSQL (NULL on SQLite, which has no sequence); a message inserted
    under it and a standing vote naming it go in one ``execute_together``, which returns the last statement's row
    count: 1 for a stored vote, 0 for a second standing vote of the voter (``ON CONFLICT DO NOTHING``: no error)
    and for an update that matches nothing (``PreparedUpdate.statement``)."""
    from datetime import UTC, datetime

    from inboxes.models import Message
    from kernel.prepared import NextId, PreparedInsert, PreparedUpdate, execute_together
    from rulesets.lepra.models import LepraVote

    _city, _other, residents, inbox = world
    voter = residents[0]
    at = datetime(2026, 5, 1, 10, 0, tzinfo=UTC)
    reserve = PreparedQuery(lambda inbox_id: Inbox.objects.filter(pk=inbox_id).order_by()
                            .annotate(next_id=NextId(Message)), ints=("inbox_id",))
    insert_message, insert_vote = PreparedInsert(Message), PreparedInsert(LepraVote, ignore_conflicts=True)
    retract = PreparedUpdate(lambda voter_id, inbox_id: (LepraVote.objects.filter(voter_id=voter_id, inbox_id=inbox_id,
                                                                                  state="standing"),
                                                         {"state": "retracted"}), ints=("voter_id", "inbox_id"))

    def post(text):
        reserved = reserve(inbox_id=inbox.pk)[0].next_id
        message = Message(pk=reserved, inbox=inbox, author_user=voter.user, author_resident=voter,
                          author_name=voter.name, body=text, body_html=text, received_at=at)
        if connection.vendor == "postgresql":
            assert isinstance(reserved, int) and not Message.objects.filter(pk=reserved).exists()
            first = [insert_message.statement(message)]
        else:
            assert reserved is None
            insert_message(message)
            first = []
        return message, first

    with transaction.atomic():
        message, first = post("казнить")
        vote = LepraVote(inbox=inbox, voter=voter, message=message, cast_at=at)
        assert execute_together([*first, insert_vote.statement(vote)]) == 1
        again, first = post("казнить")
        assert execute_together([*first, insert_vote.statement(LepraVote(inbox=inbox, voter=voter, message=again,
                                                                          cast_at=at))]) == 0
        assert execute_together([retract.statement(voter_id=voter.pk, inbox_id=inbox.pk)]) == 1
        assert execute_together([retract.statement(voter_id=voter.pk, inbox_id=inbox.pk)]) == 0
    assert list(Message.objects.filter(inbox=inbox).order_by("id").values_list("pk", "body")) == [
        (message.pk, "казнить"), (again.pk, "казнить")]
    assert list(LepraVote.objects.filter(voter=voter).values_list("message_id", "state")) == [
        (message.pk, "retracted")]


def test_datetime_parameters_compare_as_the_queryset_does_on_every_database(world):
    """``datetimes``: an aware datetime compared with a datetime field (and written by an update) gives the rows
    and the changes the ORM gives, whatever form the database stores datetimes in (SQLite: text)."""
    from datetime import UTC, datetime, timedelta

    from cities.models import ScheduledEvent
    from kernel.prepared import PreparedUpdate

    game = world[0].game
    at = datetime(2026, 5, 1, 10, 0, tzinfo=UTC)
    events = [ScheduledEvent.objects.create(game=game, kind="day_start", due_at=at + timedelta(minutes=m),
                                                 created_at=at)
              for m in (0, 30, 60)]
    due = PreparedQuery(lambda game_id, now: ScheduledEvent.objects.filter(game_id=game_id, due_at__lte=now)
                        .order_by("due_at", "id"), ints=("game_id",), datetimes=("now",))
    for minutes, expected in ((-1, []), (0, events[:1]), (45, events[:2]), (90, events)):
        now = at + timedelta(minutes=minutes)
        orm = list(ScheduledEvent.objects.filter(game_id=game.pk, due_at__lte=now).order_by("due_at", "id"))
        assert due(game_id=game.pk, now=now) == orm == expected
    retry = PreparedUpdate(lambda pk, when: (ScheduledEvent.objects.filter(pk=pk), {"retry_at": when}),
                           ints=("pk",), datetimes=("when",))
    assert retry(pk=events[1].pk, when=at + timedelta(hours=2, microseconds=7)) == 1
    events[1].refresh_from_db()
    assert events[1].retry_at == at + timedelta(hours=2, microseconds=7)
