"""The legacy interface, version 2: POST /api/v2 with a JSON document naming a service.

`routes` (the Starlette route: authentication, limits, dispatch), `services` (one handler
per service), `tokens` (the personal tokens), `xids` (external ids), `limits` (daily
request and transfer limits), `errors` (what a request can fail with)."""
