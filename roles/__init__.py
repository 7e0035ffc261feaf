"""Rulesets, the role catalogue, the draws, night actions and their resolution, victory."""
