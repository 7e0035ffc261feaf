#!/usr/bin/env python
"""Django's command-line utility for Mafia Host."""
import os
import sys


def main():
    """Run a management command; development settings unless DJANGO_SETTINGS_MODULE says otherwise."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mafia_site.settings.dev")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
