"""Live polls answered "nothing new" without building a page: versions in the shared cache and signed poll tokens.

An open page polls (htmx) for what is new: a thread for its new messages, the top bar for its unread count. The
full answer is built by the views through the access policy (``inboxes.views``). Most polls find nothing new;
this module lets a web node answer those with an empty 204 from two cache reads, without the database, the
policy or a template, and without ever telling a reader who lost access anything, not even that something is new.

How:
- A *version* is a random nonce in the shared cache (Redis in production), one per thing an answer depends on:
  an inbox (replaced after every commit that adds a message to it), a game (after every audited state change of
  the game but a plain post: deaths, seats, memberships, bans, phases and the end change who reads what), a
  user's account (after its every save: a password or an activation change) and a user's read marks (what the
  unread badge counts; a thread's poll does not depend on them, so reading does not end its own token).
  A missing version (never written, evicted, a flushed cache) is written afresh, so it differs from every token.
- A full answer issues a *poll token* (``django.core.signing``, salted, timestamped) naming the poll's URL, the
  session's user and the versions it was built from, read *before* the database: a change committed while the
  answer is built replaces a version the token already holds, so the next poll takes the full path.
- ``nothing_new(request)`` (the first middleware, ``mafia_site.middleware``) answers a poll whose token is
  intact, younger than ``MAFIA_LIVE_TOKEN_SECONDS``, for this URL and this session's user (read from the cache
  with the versions, one round trip), and whose versions all stand. Anything else (no token, a bad one, another user, a version replaced, the cache
  unreachable) goes on to the full view, which asks the policy: a reader who lost access gets its 404.

Why a reader who lost access learns nothing: every change that can take access away is audited in the game
(``kernel.audit``) or saves the account, and so replaces a version every token of that game or user holds; from
then on their polls take the full path, whose answer (a 404) does not depend on whether anything is new. The
token's age bounds what a lost version write (a process killed between the commit and the cache write) can
delay; it is the only bound that rests on time.

The shortcut is on when the cache is shared by every process (``MAFIA_LIVE_SHORTCUT``, by default when Redis is
configured): with a per-process cache a worker's post would not replace the web node's version.
"""
from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Iterable

from django.conf import settings
from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY
from django.core import signing
from django.core.cache import cache
from django.db import transaction
from django.contrib.sessions.backends import cache as cache_sessions
from django.contrib.sessions.backends import cached_db as cached_db_sessions
from django.http import HttpResponse

logger = logging.getLogger(__name__)

_SALT = "inboxes.live.poll"
#: How long a version stays in the cache without being replaced (seconds); a missing one is simply written anew.
VERSION_SECONDS = 7 * 24 * 3600
#: The query parameter that carries the poll token; it is always the URL's last parameter.
TOKEN_PARAM = "v"


def inbox_key(inbox_id: int) -> str:
    """The cache key of the version of inbox ``inbox_id`` (a database id)."""
    return f"live:i:{inbox_id}"


def game_key(game_id: int) -> str:
    """The cache key of the version of game ``game_id``: who reads what in it."""
    return f"live:g:{game_id}"


def user_key(user_id: int) -> str:
    """The cache key of the version of user ``user_id``'s account."""
    return f"live:u:{user_id}"


def reads_key(user_id: int) -> str:
    """The cache key of the version of user ``user_id``'s read marks (what their unread counts depend on)."""
    return f"live:r:{user_id}"


def enabled() -> bool:
    """True when polls may be answered from the cache (``MAFIA_LIVE_SHORTCUT``)."""
    return bool(getattr(settings, "MAFIA_LIVE_SHORTCUT", False))


def _renew(keys: list[str]) -> None:
    try:
        cache.set_many({key: secrets.token_hex(6) for key in keys}, VERSION_SECONDS)
    except Exception:  # a cache that cannot be written may hold a stale version: try to drop it instead
        logger.exception("live versions not renewed: %s", keys)
        try:
            cache.delete_many(keys)
        except Exception:
            logger.exception("live versions not dropped: %s", keys)


def renew_after_commit(keys: Iterable[str]) -> None:
    """Replace the versions ``keys`` once the current transaction commits (at once outside one); nothing when the
    shortcut is off. Called by the writers: new messages, audited changes, account saves, read marks."""
    keys = list(dict.fromkeys(keys))
    if keys and enabled():
        transaction.on_commit(lambda: _renew(keys))


def note_new_messages(inbox_ids: Iterable[int]) -> None:
    """Messages were added to the inboxes ``inbox_ids`` in the current transaction."""
    renew_after_commit(inbox_key(pk) for pk in inbox_ids)


def note_game_changed(game_id: int) -> None:
    """Something that may change who reads what in game ``game_id`` was written in the current transaction."""
    renew_after_commit([game_key(game_id)])


def note_user_changed(user_id: int) -> None:
    """User ``user_id``'s account changed in the current transaction."""
    renew_after_commit([user_key(user_id)])


def note_reads_changed(user_id: int) -> None:
    """User ``user_id``'s read marks moved (in the current transaction, or at once outside one)."""
    renew_after_commit([reads_key(user_id)])


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


def _digest(keys: list[str], versions: dict[str, str]) -> str:
    joined = "|".join(f"{key}={versions.get(key, '')}" for key in keys)
    return hashlib.blake2b(joined.encode(), digest_size=9).hexdigest()


def _stamp(session: dict) -> tuple[str | None, str]:
    """A session's user id (a string, None when logged out) and a short stamp of its auth hash."""
    user_id = session.get(SESSION_KEY)
    auth_hash = session.get(HASH_SESSION_KEY) or ""
    return (str(user_id) if user_id is not None else None,
            hashlib.blake2b(auth_hash.encode(), digest_size=6).hexdigest() if auth_hash else "")


def _session_stamp(request) -> tuple[str | None, str]:
    """``_stamp`` of ``request``'s session (loaded by the session middleware)."""
    return _stamp(request.session)


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


def poll_url(request, url: str, *snapshots: dict[str, str] | None) -> str:
    """``url`` (the next poll's path and query, without the token) with a poll token for ``request``'s session
    that stands while the versions of the ``snapshots`` (``snapshot``) do; ``url`` as it is when any snapshot is
    None: every poll then takes the full path."""
    if not snapshots or any(snap is None for snap in snapshots):
        return url
    versions: dict[str, str] = {}
    for snap in snapshots:
        versions.update(snap)
    keys = list(versions)
    user_id, stamp = _session_stamp(request)
    token = signing.dumps({"p": url, "u": user_id, "h": stamp, "k": keys, "d": _digest(keys, versions)},
                          salt=_SALT, compress=True)
    return f"{url}{'&' if '?' in url else '?'}{TOKEN_PARAM}={token}"


def poll_keys(user, game_id: int, inbox_ids: Iterable[int] = (), *, reads: bool = False) -> list[str]:
    """The keys a poll of ``user`` (any user, possibly anonymous) in game ``game_id`` depends on: the game's, the
    user's account when logged in (and their read marks when ``reads``: an unread count), and those of
    ``inbox_ids``."""
    keys = [game_key(game_id)]
    if getattr(user, "is_authenticated", False):
        keys.append(user_key(user.pk))
        if reads:
            keys.append(reads_key(user.pk))
    keys.extend(inbox_key(pk) for pk in inbox_ids)
    return keys


def nothing_new(request) -> HttpResponse | None:
    """An empty 204 when ``request`` is a poll whose token still stands (see the module docstring), else None
    (the full view answers). Runs before the session middleware: the session is read from the cache with the
    versions, in one round trip (a session engine that keeps sessions in the cache is needed; a session not in
    the cache goes to the full view, which loads it). Never raises: a bad token or an unreachable cache is a
    None."""
    if request.method not in ("GET", "HEAD") or not enabled():
        return None
    raw = request.GET.get(TOKEN_PARAM)
    if not raw or settings.SESSION_ENGINE not in _CACHED_SESSIONS or settings.SESSION_CACHE_ALIAS != "default":
        return None
    full = request.get_full_path()
    base, separator, _token = full.rpartition(f"{TOKEN_PARAM}=")
    if not separator or base[-1:] not in ("?", "&"):
        return None
    cookie = request.COOKIES.get(settings.SESSION_COOKIE_NAME, "")
    if len(cookie) > 64 or not cookie.isalnum():
        cookie = ""
    try:
        data = signing.loads(raw, salt=_SALT, max_age=settings.MAFIA_LIVE_TOKEN_SECONDS)
        if data["p"] != base[:-1]:
            return None
        keys = [str(key) for key in data["k"]]
        session_key = f"{_CACHED_SESSIONS[settings.SESSION_ENGINE]}{cookie}" if cookie else None
        found = cache.get_many([*keys, session_key] if session_key else keys)
        session = found.pop(session_key, None) if session_key else {}
        if session is None or (data["u"], data["h"]) != _stamp(session):
            return None  # a session not in the cache, or another user's: the full view decides
        if data["d"] != _digest(keys, found):
            return None
    except Exception:  # signing.BadSignature, a malformed payload, the cache unreachable: the full view answers
        return None
    response = HttpResponse(status=204)
    response["Cache-Control"] = "private, no-store"
    response["Vary"] = "Cookie"
    return response
