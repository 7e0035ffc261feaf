"""The hosted rulesets (DESIGN.md "Rulesets and layers"), one package each, registered with ``kernel.rulesets``.

Each ruleset is a Django app (``rulesets.lepra``, ``rulesets.m21``) that registers its ``RulesetSpec`` in its
``AppConfig.ready``. This layer sits above the generic engines (inboxes, tallies, the night pipeline, the
scheduler) and below the interfaces (views, the staff console, tasks).
"""
