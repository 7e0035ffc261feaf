"""Lepra's pages on the one staff console (``staff.console``), found by the console's autodiscovery of
``staff_admin`` modules: the day and the judges (``console.day``), the day's dashboard lines and speech requests
(``console.day_needs``), the clock, the phase plan and the daily post
(``console.clock``), the early end of the game (``console.game_end``), impeachment demands and complaints of no
confidence (``console.staff_tools``)."""
from .console import clock, day, day_needs, game_end, staff_tools  # noqa: F401  (each registers its pages, actions, dashboard links and needs)
