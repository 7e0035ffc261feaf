"""Path converters of the site's URLs: only well-formed ids reach a view; anything else is the resolver's 404.

``id``: a database id, 1 to 18 ASCII digits, so it always fits a bigint (a longer, fractional, signed or
non-ASCII number such as '²' or '٣' never matches). ``pid``: an opaque public id (``kernel.public_ids``), used for
every object whose count or order could tell something.
"""
from __future__ import annotations


class IdConverter:
    """A database id in a URL: ASCII digits only, at most 18 of them (below 2**63), as an ``int``."""

    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value) -> str:
        return str(int(value))


class PublicIdConverter:
    """An opaque public id in a URL (``kernel.public_ids.PUBLIC_ID_REGEX``), as the string itself."""

    from kernel.public_ids import PUBLIC_ID_REGEX as regex

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value) -> str:
        return str(value)
