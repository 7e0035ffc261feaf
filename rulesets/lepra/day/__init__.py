"""The Lepra day (RULES.md L-NOM, L-VOTE, L-SPIRIT): nominations, proxies, voting sessions and their votes, the
stored tally and its pure recount, suicide, spirits, missed voting windows, the city day page."""
