"""The project's admin configuration: ``admin.site`` is the operators' site of ``mafia_site.operator_admin``."""
from django.contrib.admin.apps import AdminConfig


class OperatorAdminConfig(AdminConfig):
    """``django.contrib.admin`` with ``OperatorAdminSite`` as its default site."""

    default_site = "mafia_site.operator_admin.OperatorAdminSite"
