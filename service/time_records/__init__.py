"""Time records: the table (`models`, which also holds expense types and
expense records), who may see and edit them (`access`), selecting them (`query`), the writes
and the entry rules they pass (`writes`, `entry_rules`, `entry_settings`), their resolvers."""
