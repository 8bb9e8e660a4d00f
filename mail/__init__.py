"""Inbound and outbound mail."""
