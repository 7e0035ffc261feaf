"""The project's admin configuration: ``admin.site`` is the operators' site of ``mafia_site.operator_admin``."""
from django.contrib.admin.apps import AdminConfig
from django.utils.translation import gettext_noop

#: Django admin's page titles, translated again in the project's catalogue (Django's Russian "Просмотреть %s" would
#: need the verbose name in the accusative: «Просмотреть житель»); named here so that makemessages keeps them.
ADMIN_TITLES = (gettext_noop("Add %s"), gettext_noop("Change %s"), gettext_noop("View %s"))


class OperatorAdminConfig(AdminConfig):
    """``django.contrib.admin`` with ``OperatorAdminSite`` as its default site."""

    default_site = "mafia_site.operator_admin.OperatorAdminSite"
