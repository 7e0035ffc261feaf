"""Admin for site operators. It shows no game secret: no alignments, no role flags, no inbox
contents and no audit log (whose payloads may name the mafia). Game staff work in their own
admin site, ``/staff/`` (``cities.staff_admin``), entered by game role and scoped by the access policy."""
from django.contrib import admin

from .models import City, Game, GameStatus, PublicPost, ScheduledEvent, Signup, StaffRole


def filter_lookup_allowed(model_admin, lookup: str) -> bool:
    """True for the URL lookups of ``model_admin``'s own list filters and nothing else: Django would also accept
    any one-step relation (``/admin/accounts/user/?staff_roles=<id>``), which turns the changelist into an oracle
    for who holds a hidden role (the Consigliere). Used by every operators' admin."""
    names = set()
    for entry in model_admin.list_filter:
        if isinstance(entry, str):
            names.add(entry)
        elif isinstance(entry, tuple | list):
            names.add(entry[0])
        else:
            names.add(getattr(entry, "parameter_name", ""))
    return lookup.split("__")[0] in names


class ReadOnlyGameDataAdmin(admin.ModelAdmin):
    """Game data is changed only through services: the admin shows it read-only; lookups only by its filters."""

    def lookup_allowed(self, lookup, value, request=None):
        return filter_lookup_allowed(self, lookup)

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


class FinishedGamesOnlyAdmin(ReadOnlyGameDataAdmin):
    """Rows of finished games only. While a game runs, its lists of sign-ups and staff would let an operator
    find the one account that is neither a listed player nor a listed host: the Consigliere."""

    def get_queryset(self, request):
        return super().get_queryset(request).filter(game__status=GameStatus.FINISHED)


@admin.register(StaffRole)
class StaffRoleAdmin(FinishedGamesOnlyAdmin):
    """Staff roles of finished games (everything is public after the game); none while a game runs:
    who holds the Consigliere role is a secret, and listing the others would single him out."""

    list_display = ("game", "kind", "city", "user")
    list_filter = ("game", "kind")


@admin.register(Signup)
class SignupAdmin(FinishedGamesOnlyAdmin):
    """Sign-ups of finished games; those of a running game are the Procurator's (setup page), not the
    operators' (see ``FinishedGamesOnlyAdmin``)."""

    list_display = ("game", "user", "signed_up_at", "withdrawn_at")
    list_filter = ("game",)


@admin.register(PublicPost)
class PublicPostAdmin(ReadOnlyGameDataAdmin):
    """Published posts only: a draft (the daily post drafted before publication) may name the alignments it is
    about to announce, which nobody may read before it is public."""

    list_display = ("title", "game", "kind", "publish_at", "published_at")
    list_filter = ("game", "kind")

    def get_queryset(self, request):
        return super().get_queryset(request).filter(published_at__isnull=False)


@admin.register(ScheduledEvent)
class ScheduledEventAdmin(ReadOnlyGameDataAdmin):
    """The clock's queue, for operators: failed events show their error and attempts. The payload is not shown:
    a game workflow may carry a secret in it."""

    list_display = ("kind", "game", "due_at", "done_at", "attempts", "retry_at", "last_error")
    exclude = ("payload",)
    list_filter = ("kind", "game")
