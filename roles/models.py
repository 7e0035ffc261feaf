"""The night pipeline (``roles.night``) and the provable draw (``roles.draw``) keep no table. The tables this app once
held (a ruleset's draws, nights and game results) are that ruleset's own, moved to its package with their
table names; this app keeps their migrations, the history the move starts from."""
