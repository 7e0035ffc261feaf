"""Turning messages into counted votes and results (vote parsers and tally toolkits)."""
