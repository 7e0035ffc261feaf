"""The benchmark of Mafia Host (``manage.py bench``; README "Benchmark").

It builds games through the services, starts gunicorn on the configured database with the bench settings
(``mafia_site.settings.bench``: the production settings on loopback HTTP, plus the floor view and a statement
counter), and measures the hot paths side by side with the stack's floor, rounds rotated. Modules:
``world`` (what is built), ``http`` (gunicorn and the HTTP clients), ``runner`` (the scenarios, the figures and
the report), ``views``/``urls``/``middleware`` (what only the bench server has).
"""
