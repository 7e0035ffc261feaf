"""A toy third ruleset, the proof that the ruleset seam holds (DESIGN.md "Rulesets and layers"): a few roles, one
day vote in a game thread, one night action (the mafia's kill), registered by a test fixture without editing any
shared file of the product. ``ruleset`` holds the spec, its post hooks, its clock handlers and its services."""
