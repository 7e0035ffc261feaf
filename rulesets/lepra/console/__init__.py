"""Lepra's pages on the one staff console (``staff.console``): the day, the judges, the clock and the daily post,
registered by ``rulesets.lepra.staff_admin``."""
