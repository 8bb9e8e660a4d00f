"""What the embedded service and timebot's fronts both stand on, and nothing else: the
database engine and unit of work (SQLite tuned for one loop, PostgreSQL), migrations under a
lock, the clock and identifiers, waiting and stopping background tasks. It imports neither
`service/` nor `timebot/`."""
