"""The provable draw (a commitment published before the numbers are drawn) as pure functions: the generator of
every production draw, the salt, the commitment and its verification. No ORM, no clock.

Production passes ``secrets.SystemRandom()`` (a cryptographically secure generator); tests pass
``random.Random(seed)``. The commitment is SHA-256, in lowercase hex, over the UTF-8 bytes of this canonical JSON::

    {"lists":{"1":["name", ...],"2":[...]},"salt":"<64 lowercase hex digits>"}

that is ``json.dumps({"lists": lists, "salt": salt_hex}, ensure_ascii=False, sort_keys=True,
separators=(",", ":"))`` where ``lists`` maps a group's key (a decimal string) to its shuffled list of names in
order (position 1 first). Anyone holding the lists and the salt can recompute it.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import random
import secrets
from collections.abc import Mapping, Sequence

SALT_BYTES = 32


def system_rng() -> random.Random:
    """The generator of every production draw and split: ``secrets.SystemRandom()``."""
    return secrets.SystemRandom()


def canonical_bytes(lists: Mapping[str, Sequence[str]], salt_hex: str) -> bytes:
    """The exact bytes the commitment hashes (see the module docstring)."""
    payload = {"lists": {str(k): list(v) for k, v in lists.items()}, "salt": salt_hex}
    return json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")


def commitment(lists: Mapping[str, Sequence[str]], salt_hex: str) -> str:
    """SHA-256 hex of ``canonical_bytes(lists, salt_hex)``."""
    return hashlib.sha256(canonical_bytes(lists, salt_hex)).hexdigest()


def verify_commitment(lists: Mapping[str, Sequence[str]], salt_hex: str, published: str) -> bool:
    """True when ``commitment(lists, salt_hex)`` equals the ``published`` hex digest (anyone can
    check after the game that the lists were fixed before the numbers). Compares in constant time."""
    return hmac.compare_digest(commitment(lists, salt_hex), (published or "").strip().lower())


def new_salt(rng: random.Random) -> str:
    """A 32-byte salt from ``rng`` as 64 lowercase hex digits."""
    return rng.getrandbits(SALT_BYTES * 8).to_bytes(SALT_BYTES, "big").hex()
