from django.apps import AppConfig


class StaffConfig(AppConfig):
    """Staff consoles (issue 7): Tribune stand-ins (L-STAFF-2), impeachment (L-IMPEACH), the audit log browser
    and the per-role dashboard of the ``/staff/`` admin site."""

    name = "staff"
    verbose_name = "Staff consoles"
