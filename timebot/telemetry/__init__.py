"""What the process tells its operator: structured logs, Prometheus metrics and the gauges of
the durable queues."""
