"""The GraphQL interface: schema assembly, execution, HTTP endpoint."""
