"""The night pipeline (``roles.night``) and the provable draw (``roles.draw``) keep no table. The tables this app once
held (Lepra's draws, nights and game results) are Lepra's own since they moved to ``rulesets.lepra.models`` with their
table names; this app keeps their migrations, the history the move starts from."""
