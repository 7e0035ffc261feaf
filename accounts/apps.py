from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Site accounts (django-allauth) with a display name used in games."""

    name = "accounts"
    verbose_name = "Accounts"
