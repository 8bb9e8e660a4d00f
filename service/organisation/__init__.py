"""The organisation (the tenant): its account and its life (`account_life`, `provisioning`),
the settings cascade (`settings_registry`, `settings_cascade`, `settings_sdl`, and
`keyed_settings`: the settings JSON by key, as the approval workflow and schedules read it),
its tags (`tag_models`, `tag_lookup`), the audit trail read back, and their resolvers."""
