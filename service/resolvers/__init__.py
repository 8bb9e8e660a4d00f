"""Resolver modules, one per area. Each exposes BINDABLES; service.graphql.schema collects them."""
