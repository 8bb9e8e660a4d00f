"""The legacy interface, version 2: POST /api/v2 with a JSON document naming a service.

`routes` (the Starlette route: authentication, limits, dispatch), `dispatch` (every service
by name), one module per kind of service (`companies`, `absences`, `persons`,
`time_entries`) on `request` (one call and what handlers read from its body), `lookups`
(what a request names, the project tree) and `values` (date-times, seconds, checked
members); `tokens` (the personal tokens), `xids` (external ids), `limits` (daily request and
transfer limits), `payload` (the body's decoding), `errors` (what a request can fail with)."""
