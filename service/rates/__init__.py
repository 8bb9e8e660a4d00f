"""Billing and cost rates: the tables (`models`), which rate applies (`rules`), amounts summed
exactly (`rate_amounts`), the database side (`store`) and their resolvers."""
