"""The Lepra ruleset (RULES.md L-*): its spec (``ruleset``), night steps (``night``) and, as they move here, its
post hooks and scheduler handlers. Registered with ``kernel.rulesets`` by ``apps.LepraConfig.ready``."""
