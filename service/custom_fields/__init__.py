"""Custom fields: every field type as one table (`registry`, its SDL: `sdl`), definitions and
values (`models`, `store`), where a field shows (`visibility_rules`), and their resolvers."""
