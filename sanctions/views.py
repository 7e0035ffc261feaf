"""The public side of sanctions: the list of running play bans. (A ruleset's pages of complaints against its staff
are its own.)"""
from __future__ import annotations

from django.shortcuts import render
from django.utils import timezone

from . import services


def play_bans(request):
    """The public list of running play bans: the player's name, the offence kind, from when and
    until when (or for life). Never the description or the evidence."""
    bans = list(services.running_play_bans(timezone.now()))
    return render(request, "sanctions/play_bans.html", {"bans": bans})
