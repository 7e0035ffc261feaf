"""The Procurator's early end of a Lepra game on the staff console (L-WIN-3): a reason, a confirmation page (the
game cannot be resumed), then ``rulesets.lepra.game_end_services.do_end_game_early``."""
from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from kernel.confirm import confirmation_page
from kernel.errors import RuleViolation
from rulesets.lepra import game_end_services
from rulesets.lepra.staff_kinds import StaffKind
from staff.console import game_provides, register_dashboard_links, register_urls, staff_admin_site, staff_game


class EndGameForm(forms.Form):
    """The reason the Procurator gives for ending the game early (published with the end)."""

    reason = forms.CharField(label=gettext_lazy("Reason"), widget=forms.Textarea(attrs={"rows": 4}), max_length=1000)


def end_game_early_view(request, slug: str):
    """The Procurator ends the game of ``slug`` early with a reason (``do_end_game_early``, L-WIN-3), after a confirmation page
    (the game cannot be resumed); 404 for anyone else."""
    game = staff_game(request, slug)
    form = EndGameForm(request.POST if request.method == "POST" else None)
    if form.is_valid():
        confirm = confirmation_page(
            request, title=_("End the game early?"),
            consequence=_("“%(title)s” ends now, without a winner by the rules: %(reason)s")
            % {"title": game.title, "reason": form.cleaned_data["reason"]},
            confirm_label=_("End the game"), cancel_url=request.get_full_path())
        if confirm is not None:
            return confirm
        try:
            game_end_services.do_end_game_early(game, reason=form.cleaned_data["reason"], acting_user=request.user)
        except RuleViolation as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, _("The game is over."))
            return HttpResponseRedirect(reverse("admin:index", current_app=staff_admin_site.name))
    context = {**staff_admin_site.each_context(request), "title": _("End the game early"), "subtitle": game.title,
               "form": form, "submit_label": _("End the game")}
    request.current_app = staff_admin_site.name
    return TemplateResponse(request, "staff_admin/staff_form.html", context)


@register_urls(tool="end_game_early")
def end_game_urls(site) -> list:
    """The early end of a game (L-WIN-3)."""
    return [path("games/<slug:slug>/end/", site.admin_view(end_game_early_view), name="end_game_early")]


@register_dashboard_links(order=55)
def end_game_link(request, role) -> list[tuple[str, str]]:
    """The Procurator's link to the early end of the game, where the game's ruleset has the tool."""
    if role.kind != StaffKind.PROCURATOR or not game_provides(role.game, "end_game_early"):
        return []
    return [(_("End the game early"), reverse("admin:end_game_early", args=[role.game.slug],
                                              current_app=staff_admin_site.name))]
