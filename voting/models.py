"""The forum vote toolkit keeps no table. The tables this app once held (a ruleset's day, court and judges) are that
ruleset's own, moved to its package with their table names; this app keeps their migrations, the
history the move starts from."""
