"""Lepra's judges and Supreme Court (RULES.md L-JUDGE, L-COURT): elections and precincts, recusal and removal,
the court's cases and its pure decision."""
