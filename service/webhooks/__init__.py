"""Integration webhooks: a durable queue of deliveries (`queue`) and the worker that POSTs them
with signatures and retries (`worker`)."""
