"""Lepra's setup (RULES.md L-ASSIGN, L-COMM): the mafia draw and the commissar offers."""
