from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin

from cities.admin import filter_lookup_allowed

from .models import User


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    """Site accounts. Holds no game secrets: roles and alignments are not shown here (L-STAFF-5)."""

    fieldsets = BaseUserAdmin.fieldsets + (("Games", {"fields": ("display_name",)}),)
    list_display = ("username", "display_name", "email", "is_staff")
    search_fields = ("username", "display_name", "email")

    def has_delete_permission(self, request, obj=None):
        """No deletion here (deactivate instead): the confirmation page lists the account's protected game rows,
        the Consigliere's staff role among them (L-STAFF-5/6); and seats and roles must outlive a click."""
        return False

    def lookup_allowed(self, lookup, value, request=None):
        """Only the list filters' own lookups: ``?staff_roles=<id>`` would name the holder of any role."""

        return filter_lookup_allowed(self, lookup)
