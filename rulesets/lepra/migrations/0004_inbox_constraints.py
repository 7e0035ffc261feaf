"""Lepra's rules on the shared inbox table, which the engine's ``Inbox`` model no longer names
(``inboxes.0004_inbox_rules_to_rulesets`` removes them from its state and its table): one current personal inbox per
resident and a personal inbox about its resident (L-INBOX-5), one current mafia inbox per city (L-INBOX-4), and the
per-city kinds (L-INBOX-1, -4, -5, -9, -10, -11, -14) have their city. Installed again under the same names, as SQL
only (the migration state knows none of them): partial unique indexes; ``CHECK`` constraints on PostgreSQL, triggers
on SQLite (``rulesets.lepra.inbox_constraints``). Reversed, they are dropped (and the engine's migration, reversed
after, puts its own constraints back)."""
from django.db import migrations


def install(apps, schema_editor):
    from rulesets.lepra.inbox_constraints import install as install_rules

    install_rules(schema_editor.connection)


def uninstall(apps, schema_editor):
    from rulesets.lepra.inbox_constraints import uninstall as uninstall_rules

    uninstall_rules(schema_editor.connection)


class Migration(migrations.Migration):

    dependencies = [
        ('inboxes', '0004_inbox_rules_to_rulesets'),
        ('lepra', '0003_night_models_from_roles'),
    ]

    operations = [
        migrations.RunPython(install, uninstall),
    ]
