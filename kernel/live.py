"""Live polls answered "nothing new" without building a page: versions in the shared cache and opaque poll tokens.

An open page polls (htmx) for what is new: a thread for its new messages, the top bar for its unread count. The
full answer is built by the views through the access policy (``inboxes.views``). Most polls find nothing new;
this module lets a web node answer those with an empty 204 from the cache, without the database, the policy or a
template, and so that the answer never depends on anything the reader may not know.

How:
- A *version* is a random nonce in the shared cache (Redis in production), one per thing an answer depends on:
  an inbox (renewed after every commit that adds a message to it), a *reader* (one user in one game: renewed
  after every commit that changes what that user may read in that game: their seat's death, replacement or
  move, their memberships, staff roles, stand-in periods, spectating), the game as a whole (renewed only by a
  change of who reads what for everyone: its status, the end and what it discloses), a user's account (every
  save: a password or an activation change) and a user's read marks (what the unread badge counts).
  A missing version (never written, evicted, a flushed cache) is written afresh, so it differs from every token.
- The renewals follow from the rows the access policy reads (``ReaderRowsQuerySet`` and the models' save and
  delete signals, ``track_reader_rows``; an inbox's readers are the policy's own, ``track_inboxes``), whichever
  service writes them; they are collected per transaction, deduplicated, and written once after the commit
  (``transaction.on_commit``). An audit row renews nothing: a night's decision or check changes nobody's reading.
- A full answer issues a *poll token*: a random string (``secrets.token_urlsafe``) whose record, kept in the cache
  for ``MAFIA_LIVE_TOKEN_SECONDS``, names the poll's URL, the session's user and the versions the answer was built
  from, read *before* the database (a change committed meanwhile replaces a version the record already holds).
  Nothing can be read from the token itself, and two tokens tell nothing about each other.
- A token holds only versions of what its reader may know: a reader whose view of an inbox stops at a time (a
  dead seat in a dated inbox while the game runs) gets no version of that inbox, only their reader version, so a
  later post there changes nothing in how their polls are answered.
- ``nothing_new(request)`` (the first middleware, ``mafia_site.middleware``) answers a poll whose token record is
  found, for this URL and this session's user, and whose versions all stand, with ``empty_answer()``. Anything
  else goes to the full view, which asks the policy: a reader who lost access gets its 404. When the full view
  finds nothing new for the reader it answers ``NothingNew``, which the first middleware turns into the very same
  ``empty_answer()`` (status, body, headers), and it points the request's token at the versions it read
  (``still``): the two paths cannot be told apart, and the next poll takes the cheap one again.

Why a reader learns nothing from the path taken: the answer is the same on both paths, and a change renews only
the versions of the readers it concerns. A change that only time makes, with no write (a stand-in period starting
or ending), is a planned time: a record never stands past the reader's next one (``until``). The record's
lifetime bounds what a lost version write (a process killed between the commit and the cache write) can delay.

The shortcut is on when the cache is shared by every process (``MAFIA_LIVE_SHORTCUT``, by default when Redis is
configured): with a per-process cache a worker's post would not replace the web node's version.
"""
from __future__ import annotations

import hashlib
import logging
import math
import secrets
import time
from collections.abc import Callable, Iterable
from datetime import datetime

from django.conf import settings
from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY
from django.contrib.sessions.backends import cache as cache_sessions
from django.contrib.sessions.backends import cached_db as cached_db_sessions
from django.core.cache import cache
from django.core.exceptions import FieldDoesNotExist
from django.db import models, transaction
from django.db.models.signals import post_save, pre_delete
from django.http import HttpResponse

logger = logging.getLogger(__name__)

#: How long a version stays in the cache without being replaced (seconds); a missing one is simply written anew.
VERSION_SECONDS = 7 * 24 * 3600
#: The query parameter that carries the poll token; it is always the URL's last parameter.
TOKEN_PARAM = "v"
#: The length of a token (``secrets.token_urlsafe(16)``: 128 random bits).
_TOKEN_LENGTH = 22
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def inbox_key(inbox_id: int) -> str:
    """The cache key of the version of inbox ``inbox_id`` (a database id): its messages."""
    return f"live:i:{inbox_id}"


def game_key(game_id: int) -> str:
    """The cache key of the version of game ``game_id`` as a whole: who reads what in it, for everyone."""
    return f"live:g:{game_id}"


def reader_key(game_id: int, user_id: int) -> str:
    """The cache key of the version of what user ``user_id`` may read in game ``game_id``."""
    return f"live:a:{game_id}:{user_id}"


def user_key(user_id: int) -> str:
    """The cache key of the version of user ``user_id``'s account."""
    return f"live:u:{user_id}"


def reads_key(user_id: int) -> str:
    """The cache key of the version of user ``user_id``'s read marks (what their unread counts depend on)."""
    return f"live:r:{user_id}"


def _token_key(token: str) -> str:
    return f"live:t:{token}"


def enabled() -> bool:
    """True when polls may be answered from the cache (``MAFIA_LIVE_SHORTCUT``)."""
    return bool(getattr(settings, "MAFIA_LIVE_SHORTCUT", False))


# ----------------------------------------------------------------------------------------------------------------
# Renewals: collected per transaction, written once after its commit
# ----------------------------------------------------------------------------------------------------------------

def _renew(keys: list[str]) -> None:
    try:
        cache.set_many({key: secrets.token_hex(6) for key in keys}, VERSION_SECONDS)
    except Exception:  # a cache that cannot be written may hold a stale version: try to drop it instead
        logger.exception("live versions not renewed: %s", keys)
        try:
            cache.delete_many(keys)
        except Exception:
            logger.exception("live versions not dropped: %s", keys)


def _flush(connection) -> None:
    """Write the renewals collected on ``connection``: all of them, by the transaction's first on-commit callback
    (the others find nothing left)."""
    _outer, keys = connection.__dict__.pop("_live_pending", (None, {}))
    if keys:
        _renew(list(keys))


def renew_after_commit(keys: Iterable[str]) -> None:
    """Replace the versions ``keys`` once the current transaction commits (at once outside one), each once however
    often the transaction names it; nothing when the shortcut is off. Keys collected in a transaction that rolled
    back are dropped when the next one starts another outer block (else written with its commit: a renewal is
    never wrong, it only costs a full answer)."""
    if not enabled():
        return
    keys = list(dict.fromkeys(keys))
    if not keys:
        return
    connection = transaction.get_connection()
    if not connection.in_atomic_block:
        _renew(keys)
        return
    outer = connection.atomic_blocks[0] if connection.atomic_blocks else None
    pending = connection.__dict__.get("_live_pending")
    if pending is None or pending[0] is not outer:  # none yet, or left by a transaction that rolled back
        pending = connection.__dict__["_live_pending"] = (outer, {})
    pending[1].update(dict.fromkeys(keys))
    transaction.on_commit(lambda: _flush(connection))


def note_new_messages(inbox_ids: Iterable[int]) -> None:
    """Messages were added to the inboxes ``inbox_ids`` in the current transaction."""
    renew_after_commit(inbox_key(pk) for pk in inbox_ids)


def note_game_changed(game_id: int) -> None:
    """Who reads what changed for everyone in game ``game_id`` (its status, the end, what it discloses) in the
    current transaction. Not for a change that concerns some readers only: ``note_readers_changed``."""
    renew_after_commit([game_key(game_id)])


def note_readers_changed(pairs: Iterable[tuple[int, int | None]]) -> None:
    """What the users may read changed in the current transaction: ``pairs`` of (game id, user id); a None user
    (a row with no account) is skipped."""
    renew_after_commit(reader_key(game_id, user_id) for game_id, user_id in pairs if user_id is not None)


def note_user_changed(user_id: int) -> None:
    """User ``user_id``'s account changed in the current transaction."""
    renew_after_commit([user_key(user_id)])


def note_reads_changed(user_id: int) -> None:
    """User ``user_id``'s read marks moved (in the current transaction, or at once outside one)."""
    renew_after_commit([reads_key(user_id)])


# ----------------------------------------------------------------------------------------------------------------
# The rows the access policy reads: every write of them renews the versions of the readers they concern
# ----------------------------------------------------------------------------------------------------------------

#: A model's readers: given a list of its instances (or a queryset of its rows), the (game id, user id) pairs whose
#: reading they decide; ``ALL`` as a user id stands for every reader of the game (``note_game_changed``).
ReadersOf = Callable[[Iterable], Iterable[tuple[int, int | None]]]
ALL = -1


def _note(pairs: Iterable[tuple[int, int | None]]) -> None:
    pairs = list(pairs)
    for game_id in {game_id for game_id, user_id in pairs if user_id == ALL}:
        note_game_changed(game_id)
    note_readers_changed((game_id, user_id) for game_id, user_id in pairs if user_id != ALL)


class ReaderRowsQuerySet(models.QuerySet):
    """The queryset of a model whose rows the access policy reads (memberships, seats, staff roles...):
    ``update`` and ``bulk_create`` renew the versions of the readers the rows concern (the model's
    ``live_readers``, a ``ReadersOf``): before the write, and after it too when it sets a relation (an update
    that moves a row to another seat or user concerns both)."""

    def update(self, **kwargs):
        if not enabled():
            return super().update(**kwargs)
        readers = self.model.live_readers
        rows = list(self.values_list("pk", flat=True))
        _note(readers(self.model._base_manager.filter(pk__in=rows)))
        count = super().update(**kwargs)
        if any(self._sets_relation(name) for name in kwargs):
            _note(readers(self.model._base_manager.filter(pk__in=rows)))
        return count

    def _sets_relation(self, name: str) -> bool:
        try:
            return self.model._meta.get_field(name.removesuffix("_id")).is_relation
        except FieldDoesNotExist:  # not a field's name: Django's ``update`` refuses it itself
            return True

    def bulk_create(self, objs, *args, **kwargs):
        objs = list(objs)
        created = super().bulk_create(objs, *args, **kwargs)
        if enabled():
            _note(self.model.live_readers(objs))
        return created


def track_reader_rows(model: type[models.Model]) -> None:
    """Renew the versions of the readers ``model``'s rows concern (``model.live_readers``) whenever one is saved
    (the readers before the save too: ``model.from_db`` keeps the loaded instance's ``_live_loaded``) or deleted
    (a cascade included). Call once, at the model's definition; its manager should be a ``ReaderRowsQuerySet``'s,
    for the writes that send no signal."""

    def saved(sender, instance, created, raw=False, **kwargs):
        if raw or not enabled():
            return
        before = getattr(instance, "_live_loaded", None)
        _note(model.live_readers([instance] if before is None else [instance, before]))

    def deleted(sender, instance, **kwargs):
        if enabled():
            _note(model.live_readers([instance]))

    post_save.connect(saved, sender=model, weak=False, dispatch_uid=f"live-save-{model._meta.label}")
    pre_delete.connect(deleted, sender=model, weak=False, dispatch_uid=f"live-delete-{model._meta.label}")


#: The access policy's readers of inboxes: given inbox ids, the (game id, user id) pairs who may read them now
#: (``ALL`` as a user id: everyone in the game); registered by the inboxes app (``set_inbox_readers``).
_inbox_readers: Callable[[list[int]], Iterable[tuple[int, int]]] | None = None


def set_inbox_readers(readers: Callable[[list[int]], Iterable[tuple[int, int]]]) -> None:
    """Register the access policy's readers of inboxes (``_inbox_readers``); once, when the inboxes app is ready."""
    global _inbox_readers
    _inbox_readers = readers


def _readers_of_inboxes(inbox_ids: list[int], game_ids: set[int]) -> list[tuple[int, int]]:
    """The policy's readers of ``inbox_ids`` now; everyone in ``game_ids`` when the policy cannot say (none
    registered, or it failed: a renewal too many is never wrong)."""
    try:
        if _inbox_readers is not None:
            return list(_inbox_readers(inbox_ids))
    except Exception:  # whatever failed, renewing everyone's version is safe
        logger.exception("live readers of inboxes %s not computed", inbox_ids)
    return [(game_id, ALL) for game_id in game_ids]


def track_inboxes(model: type[models.Model]) -> None:
    """Renew the versions of the readers of ``model``'s inboxes when one is saved (new, rolled over, killed):
    those the access policy names once the transaction has committed (the new inbox's members, staff and
    spectators as their grants say, everyone for an inbox public now), so that nobody else's polls change path;
    and when one is deleted, its readers before it goes."""

    def saved(sender, instance, raw=False, **kwargs):
        if raw or not enabled():
            return
        ids, games = [instance.pk], {instance.game_id}
        transaction.on_commit(lambda: _note(_readers_of_inboxes(ids, games)))

    def deleted(sender, instance, **kwargs):
        if enabled():
            _note(_readers_of_inboxes([instance.pk], {instance.game_id}))

    post_save.connect(saved, sender=model, weak=False, dispatch_uid=f"live-save-{model._meta.label}")
    pre_delete.connect(deleted, sender=model, weak=False, dispatch_uid=f"live-delete-{model._meta.label}")


class Loaded:
    """What an instance held when read from the database (its field values by attribute name), for the readers
    a save moves away from (a seat's previous holder). Set by a tracked model's ``from_db``."""

    def __init__(self, values: dict):
        self.__dict__.update(values)


class HeldByAccount:
    """Mixin of a tracked model whose rows an account holds in a game (``game_id``, ``user_id``: a seat, a staff
    role): an instance read from the database keeps the holder it was read with (``_live_loaded``), so that a
    save giving the row to another account renews the previous holder's versions too. List it before
    ``models.Model``."""

    @classmethod
    def from_db(cls, db, field_names, values):
        """The instance, with the holder it was read with."""
        instance = super().from_db(db, field_names, values)
        instance._live_loaded = Loaded({"game_id": instance.__dict__.get("game_id"),
                                        "user_id": instance.__dict__.get("user_id")})
        return instance


# ----------------------------------------------------------------------------------------------------------------
# Tokens
# ----------------------------------------------------------------------------------------------------------------

def current_versions(keys: list[str]) -> dict[str, str]:
    """The versions of ``keys``, writing a fresh one for each missing key (``add``: a concurrent writer's value
    wins). Raises the cache's error when it is unreachable."""
    found = cache.get_many(keys)
    missing = [key for key in keys if key not in found]
    for key in missing:
        cache.add(key, secrets.token_hex(6), VERSION_SECONDS)
    if missing:
        found.update(cache.get_many(missing))
    return found


def _stamp(session: dict) -> tuple[str | None, str]:
    """A session's user id (a string, None when logged out) and a short stamp of its auth hash."""
    user_id = session.get(SESSION_KEY)
    auth_hash = session.get(HASH_SESSION_KEY) or ""
    return (str(user_id) if user_id is not None else None,
            hashlib.blake2b(auth_hash.encode(), digest_size=6).hexdigest() if auth_hash else "")


#: The session engines that keep every live session in the cache, and their keys' prefixes.
_CACHED_SESSIONS = {"django.contrib.sessions.backends.cached_db": cached_db_sessions.KEY_PREFIX,
                    "django.contrib.sessions.backends.cache": cache_sessions.KEY_PREFIX}


def snapshot(keys: list[str]) -> dict[str, str] | None:
    """The versions of ``keys`` now, to be read *before* the database reads an answer depends on; None when the
    shortcut is off or the cache is unreachable (the answer then carries no token)."""
    if not enabled():
        return None
    try:
        return current_versions(keys)
    except Exception:
        logger.exception("live versions unreadable")
        return None


def without(snap: dict[str, str] | None, keys: Iterable[str]) -> dict[str, str] | None:
    """``snap`` less the versions of ``keys`` (what the reader may not know: an inbox whose view stops at a time)."""
    if snap is None:
        return None
    dropped = set(keys)
    return {key: value for key, value in snap.items() if key not in dropped}


def _merged(snapshots) -> dict[str, str] | None:
    if not snapshots or any(snap is None for snap in snapshots):
        return None
    versions: dict[str, str] = {}
    for snap in snapshots:
        versions.update(snap)
    return versions


def _write_record(request, token: str, url: str, versions: dict[str, str], until: datetime | None) -> bool:
    """Write the record of ``token``; none (and the old one dropped) when ``until`` has come. The record stands
    for ``MAFIA_LIVE_TOKEN_SECONDS`` at most, and never past ``until``."""
    user_id, stamp = _stamp(request.session)
    seconds = settings.MAFIA_LIVE_TOKEN_SECONDS
    ends = time.time() + seconds if until is None else min(time.time() + seconds, until.timestamp())
    try:
        if ends <= time.time():
            cache.delete(_token_key(token))
            return False
        cache.set(_token_key(token), {"p": url, "u": user_id, "h": stamp, "v": versions, "x": ends},
                  max(1, math.ceil(ends - time.time())))
    except Exception:
        logger.exception("live poll token not written")
        return False
    return True


def poll_url(request, url: str, *snapshots: dict[str, str] | None, until: datetime | None = None) -> str:
    """``url`` (the next poll's path and query, without the token) with a new poll token for ``request``'s session
    that stands while the versions of the ``snapshots`` (``snapshot``) do, and not past ``until`` (aware UTC: the
    next planned time at which what the reader may read changes by itself, with no write that renews a version);
    ``url`` as it is when any snapshot is None (every poll then takes the full path)."""
    versions = _merged(snapshots)
    if versions is None:
        return url
    token = secrets.token_urlsafe(16)
    if not _write_record(request, token, url, versions, until):
        return url
    return f"{url}{'&' if '?' in url else '?'}{TOKEN_PARAM}={token}"


def poll_keys(user, game_id: int, inbox_ids: Iterable[int] = (), *, reads: bool = False) -> list[str]:
    """The keys a poll of ``user`` (any user, possibly anonymous) in game ``game_id`` depends on: the game's as a
    whole, and for a logged-in user what they may read in it, their account (and their read marks when ``reads``:
    an unread count); then those of ``inbox_ids``."""
    keys = [game_key(game_id)]
    if getattr(user, "is_authenticated", False):
        keys += [reader_key(game_id, user.pk), user_key(user.pk)]
        if reads:
            keys.append(reads_key(user.pk))
    keys.extend(inbox_key(pk) for pk in inbox_ids)
    return keys


def _token_of(request) -> tuple[str, str] | None:
    """(the URL without the token, the token) of a poll request carrying a well-formed token, else None."""
    raw = request.GET.get(TOKEN_PARAM)
    if not raw or len(raw) != _TOKEN_LENGTH or not _TOKEN_CHARS.issuperset(raw):
        return None
    full = request.get_full_path()
    suffix = f"{TOKEN_PARAM}={raw}"
    if not full.endswith(suffix) or full[-len(suffix) - 1:-len(suffix)] not in ("?", "&"):
        return None
    return full[:-len(suffix) - 1], raw


class NothingNew(HttpResponse):
    """What a full poll view returns when it finds nothing new for the reader: the first middleware answers it
    with ``empty_answer()``, the shortcut's very answer (nothing the inner middleware added is sent)."""

    status_code = 204


def empty_answer() -> HttpResponse:
    """The one answer "nothing new" to a poll, on either path: 204, no body, not to be stored."""
    response = HttpResponse(status=204)
    response["Cache-Control"] = "private, no-store"
    response["Vary"] = "Cookie"
    return response


def still(request, *snapshots: dict[str, str] | None, until: datetime | None = None) -> NothingNew:
    """The full view's "nothing new" for a poll ``request``: its token (when well-formed) is pointed at the
    versions of ``snapshots``, read before the view's reads, so that the next poll may take the cheap path, until
    ``until`` at the latest (as for ``poll_url``); the page keeps its URL, as after the shortcut's answer."""
    versions = _merged(snapshots)
    found = _token_of(request)
    if versions is not None and found is not None:
        _write_record(request, found[1], found[0], versions, until)
    return NothingNew()


def nothing_new(request) -> HttpResponse | None:
    """``empty_answer()`` when ``request`` is a poll whose token still stands (see the module docstring), else
    None (the full view answers). Runs before the session middleware: the session is read from the cache with the
    token's record (a session engine that keeps sessions in the cache is needed; a session not in the cache goes
    to the full view, which loads it), then the versions the record names. Never raises: a bad token or an
    unreachable cache is a None."""
    if request.method not in ("GET", "HEAD") or not enabled():
        return None
    if settings.SESSION_ENGINE not in _CACHED_SESSIONS or settings.SESSION_CACHE_ALIAS != "default":
        return None
    found = _token_of(request)
    if found is None:
        return None
    url, token = found
    cookie = request.COOKIES.get(settings.SESSION_COOKIE_NAME, "")
    if len(cookie) > 64 or not cookie.isalnum():
        cookie = ""
    try:
        record_key = _token_key(token)
        session_key = f"{_CACHED_SESSIONS[settings.SESSION_ENGINE]}{cookie}" if cookie else None
        got = cache.get_many([record_key, session_key] if session_key else [record_key])
        record = got.get(record_key)
        session = got.get(session_key) if session_key else {}
        if record is None or session is None or record["p"] != url or record["x"] <= time.time():
            return None
        if (record["u"], record["h"]) != _stamp(session):
            return None  # another user's session: the full view decides
        versions = record["v"]
        if cache.get_many(list(versions)) != versions:
            return None
    except Exception:  # a malformed record, the cache unreachable: the full view answers
        return None
    return empty_answer()


def field_values(rows, *fields: str) -> list[tuple]:
    """The values of ``fields`` of ``rows``: a queryset (one query) or instances (``Loaded`` included)."""
    if isinstance(rows, models.QuerySet):
        return list(rows.values_list(*fields))
    return [tuple(getattr(row, field) for field in fields) for row in rows]
