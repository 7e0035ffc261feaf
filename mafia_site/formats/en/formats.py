"""English date formats of the site: one readable date and time, "Tue 8 Dec 2026, 04:30" (the zone's abbreviation
follows wherever a time is shown with its zone), the same on every English page and in the site's own posts."""
DATETIME_FORMAT = "D j M Y, H:i"
SHORT_DATETIME_FORMAT = "D j M Y, H:i"
