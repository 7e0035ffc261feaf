"""The site's own address, for links that leave the site (e-mails): ``MAFIA_SITE_SCHEME``://``MAFIA_SITE_DOMAIN``."""
from __future__ import annotations

from django.conf import settings


def absolute_url(path: str) -> str:
    """``path`` (starting with "/") as an absolute URL of this site, e.g. ``https://mafia.example.org/inboxes/…``."""
    return f"{settings.MAFIA_SITE_SCHEME}://{settings.MAFIA_SITE_DOMAIN}{path}"
