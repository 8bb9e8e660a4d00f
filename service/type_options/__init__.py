"""The options of absence types and expense types as one table (`type_flags`, `models`),
and the mutation that edits them."""
