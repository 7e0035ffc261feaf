"""Admin for site operators. It shows no game secret (L-STAFF-5): no alignments, no role flags, no inbox
contents and no audit log (whose payloads may name the mafia). Game staff work in their own
admin site, ``/staff/`` (``cities.staff_admin``), entered by game role and scoped by the access policy."""
from django.contrib import admin

from .models import City, Game, PublicPost, ScheduledEvent, Signup, StaffRole


class ReadOnlyGameDataAdmin(admin.ModelAdmin):
    """Game data is changed only through services: the admin shows it read-only."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Game)
class GameAdmin(ReadOnlyGameDataAdmin):
    list_display = ("title", "slug", "ruleset", "status", "day_number", "time_zone", "created_at")
    list_filter = ("ruleset", "status")
    search_fields = ("title", "slug")


@admin.register(City)
class CityAdmin(ReadOnlyGameDataAdmin):
    list_display = ("name", "game", "number")
    list_filter = ("game",)


@admin.register(StaffRole)
class StaffRoleAdmin(ReadOnlyGameDataAdmin):
    """Public staff roles only: who holds the Consigliere role is a secret (L-STAFF-6)."""

    list_display = ("game", "kind", "city", "user")
    list_filter = ("game", "kind")

    def get_queryset(self, request):
        return super().get_queryset(request).exclude(kind="consigliere")


@admin.register(Signup)
class SignupAdmin(ReadOnlyGameDataAdmin):
    """Sign-ups (public: the recruitment post lists the players); moved into cities on the setup page."""

    list_display = ("game", "user", "signed_up_at", "withdrawn_at")
    list_filter = ("game",)


@admin.register(PublicPost)
class PublicPostAdmin(ReadOnlyGameDataAdmin):
    list_display = ("title", "game", "kind", "publish_at", "published_at")
    list_filter = ("game", "kind")


@admin.register(ScheduledEvent)
class ScheduledEventAdmin(ReadOnlyGameDataAdmin):
    """The clock's queue, for operators: failed events show their error and attempts."""

    list_display = ("kind", "game", "due_at", "done_at", "attempts", "retry_at", "last_error")
    list_filter = ("kind", "game")
