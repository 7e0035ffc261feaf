"""Lepra's phase plan (RULES.md L-DAY, L-POST-2): the days' planned times, day and night start, the daily post."""
