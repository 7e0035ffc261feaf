from django.apps import AppConfig
from django.db.models.signals import post_migrate


def sync_site_domain(sender, using="default", **kwargs) -> None:
    """Keep the ``django.contrib.sites`` row of ``SITE_ID`` equal to ``MAFIA_SITE_DOMAIN`` / ``MAFIA_SITE_NAME``
    after every migrate, so that e-mails (allauth's confirmations, the digests) link to this site, never to
    Django's placeholder example.com."""
    from django.conf import settings
    from django.contrib.sites.models import Site

    Site.objects.using(using).update_or_create(
        pk=settings.SITE_ID, defaults={"domain": settings.MAFIA_SITE_DOMAIN, "name": settings.MAFIA_SITE_NAME})


class AccountsConfig(AppConfig):
    """Site accounts (django-allauth) with a display name used in games."""

    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        post_migrate.connect(sync_site_domain, dispatch_uid="accounts.sync_site_domain")
