"""Lepra's pages on the one staff console (``staff.console``), found by the console's autodiscovery of
``staff_admin`` modules: the day and the judges (``console.day``), the clock, the phase plan and the daily post
(``console.clock``)."""
from .console import clock, day  # noqa: F401  (each registers its pages, actions, dashboard links and needs)
