"""Turning messages into counted votes and results (issues 4, 5, 10)."""
