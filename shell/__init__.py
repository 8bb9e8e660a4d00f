"""The composition root: the CLI, the one ASGI app, and the assembly that builds the runtime
and installs each part (the embedded service, the Slack app, mail, the web pages). It may
import every package; nothing imports it."""
