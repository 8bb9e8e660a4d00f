"""The organisation (the tenant): its account and its life (`account_life`, `signup`,
`provisioning`), the settings cascade (`settings_registry`, `settings_cascade`, `settings_sdl`),
its tags (`tag_models`, `tag_lookup`, `tags_access`), the audit trail read back, and their
resolvers."""
