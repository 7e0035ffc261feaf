"""Lepra's management commands."""
