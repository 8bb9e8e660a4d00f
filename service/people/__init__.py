"""People: who they are (`models`), their details, lifecycle and managers, invitations and
joining (`invitations`, `join_mail`, and `signup`: a sign-in code's twin that creates the
organisation and its first person), importing them from CSV (`csv_import`, `import_plan`,
`import_store`), the checks their changes pass (`checks`) and their resolvers."""
