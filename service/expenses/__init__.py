"""Expense types and expense records: their lookup (`lookup`) and resolvers."""
