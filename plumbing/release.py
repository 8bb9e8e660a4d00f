"""Which release this code is.

The version is said by `timebot --version`, `/healthz` and `/metrics` (`timebot_build_info`),
and recorded beside each schema revision it migrates a database to, so that an older release
opened on that database can name the release that wrote it (plumbing.schema_versions)."""

from __future__ import annotations

VERSION = "1.1.0.dev0"
