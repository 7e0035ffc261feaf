from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class StaffConfig(AppConfig):
    """Staff consoles (issue 7): Tribune stand-ins (L-STAFF-2), impeachment (L-IMPEACH), the audit log browser
    and the per-role dashboard of the ``/staff/`` admin site."""

    name = "staff"
    verbose_name = _("Staff consoles")
