"""The forum vote toolkit keeps no table. The tables this app once held (Lepra's day, court and judges) are Lepra's
own since they moved to ``rulesets.lepra.models`` with their table names; this app keeps their migrations, the
history the move starts from."""
