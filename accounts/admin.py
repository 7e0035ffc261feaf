from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin

from .models import User


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    """Site accounts. Holds no game secrets: roles and alignments are not shown here (L-STAFF-5)."""

    fieldsets = BaseUserAdmin.fieldsets + (("Games", {"fields": ("display_name",)}),)
    list_display = ("username", "display_name", "email", "is_staff")
    search_fields = ("username", "display_name", "email")
