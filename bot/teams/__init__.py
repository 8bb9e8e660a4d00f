"""The Microsoft Teams front (issue 42): a personal chat with the bot, on the Microsoft 365
Agents SDK's activity model. `endpoint` takes the activities (JWT verified), `connector`
answers through the Bot Connector, `tenants` and `identity` tell which organisation and person
an activity is, `chat` runs quick entry, `consent` connects a tenant, `component` installs it
all when TEAMS_APP_ID is set."""
