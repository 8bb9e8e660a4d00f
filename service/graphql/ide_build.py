"""Builds the offline GraphQL IDE into service/static/graphiql (placeholder until built)."""

from __future__ import annotations

if __name__ == "__main__":
    print("GraphQL IDE build: not yet implemented")
