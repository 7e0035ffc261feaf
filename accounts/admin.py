"""The operators' admin (`/admin/`) of accounts: the user list and form, display names checked as at sign-up."""
from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin
from django.contrib.auth.forms import UserChangeForm
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils.translation import gettext as _

from cities.admin import filter_lookup_allowed

from .models import User
from .names import validate_public_name


class OperatorUserChangeForm(UserChangeForm):
    """The operators' user form: a new display name or username is checked like one chosen at sign-up
    (``accounts.names``: no impersonation of the site, staff or another player)."""

    def clean_display_name(self):
        name = self.cleaned_data.get("display_name", "")
        if name != self.instance.display_name:
            validate_public_name(name, exclude_user_id=self.instance.pk)
        return name

    def clean_username(self):
        username = self.cleaned_data.get("username")
        if username and username != self.instance.username and not self.cleaned_data.get("display_name"):
            validate_public_name(username, exclude_user_id=self.instance.pk)
        return username


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    """Site accounts. Holds no game secrets: roles and alignments are not shown here. No operator
    sets another account's password or e-mail here: one who could would log in as a player of a running game and
    read their mafia inbox; owners reset their passwords by e-mail."""

    form = OperatorUserChangeForm
    fieldsets = BaseUserAdmin.fieldsets + (("Games", {"fields": ("display_name",)}),)
    list_display = ("username", "display_name", "email", "is_staff")
    search_fields = ("username", "display_name", "email")

    def get_readonly_fields(self, request, obj=None):
        """Another account's e-mail address is read-only: changing it would let an operator reset its password by
        e-mail. The same for every account, so that the form tells nothing of who plays."""
        fields = tuple(super().get_readonly_fields(request, obj))
        if obj is not None and obj.pk != request.user.pk:
            fields += ("email",)
        return fields

    def user_change_password(self, request, id, form_url=""):
        """Refuse to set another account's password, with the reason; one's own is allowed. Refused
        alike for every account, players of a running game or not: a refusal only for them would tell an
        operator which accounts play, and so who the Consigliere is."""
        if str(id) != str(request.user.pk):
            messages.error(request, _("An operator does not set another account's password: its owner resets it "
                                      "by e-mail (an operator could otherwise log in as a player of a running "
                                      "game)."))
            try:
                return HttpResponseRedirect(reverse("admin:accounts_user_change", args=[int(id)]))
            except (TypeError, ValueError):
                return HttpResponseRedirect(reverse("admin:accounts_user_changelist"))
        return super().user_change_password(request, id, form_url)

    def has_delete_permission(self, request, obj=None):
        """No deletion here (deactivate instead): the confirmation page lists the account's protected game rows,
        the Consigliere's staff role among them; and seats and roles must outlive a click."""
        return False

    def lookup_allowed(self, lookup, value, request=None):
        """Only the list filters' own lookups: ``?staff_roles=<id>`` would name the holder of any role."""

        return filter_lookup_allowed(self, lookup)
