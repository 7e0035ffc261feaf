from django.apps import AppConfig
from django.utils.module_loading import autodiscover_modules
from django.utils.translation import gettext_lazy as _


class StaffConfig(AppConfig):
    """The staff console (``staff.console``: the one ``/staff/`` admin site and its registries), stand-ins,
        the audit log browser and the per-role dashboard."""

    name = "staff"
    verbose_name = _("Staff consoles")

    def ready(self) -> None:
        """Import every installed app's ``staff_admin`` module: each registers its model admins, pages, dashboard
        links and needs on the console (as ``django.contrib.admin`` autodiscovers ``admin`` modules)."""
        autodiscover_modules("staff_admin")
