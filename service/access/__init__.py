"""Access: the permission catalogue of roles (`permissions`), who may use which project,
absence type and expense type (`models`, `rules`, `items`), who manages a project
(`project_managers`) and who carries a tag (`tag_members`), the access links as one table
(`links`), and the resolvers of access and roles."""
