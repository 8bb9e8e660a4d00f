"""The time tracking service, embedded: schema, models, rules, resolvers."""
