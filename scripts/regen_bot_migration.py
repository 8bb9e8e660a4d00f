"""Regenerate the bot database's migration 0001 from timebot/state/models.py (pre-release only)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from alembic import command
from alembic.config import Config

from timebot.state.db import MIGRATIONS_DIR

target = MIGRATIONS_DIR / "versions" / "0001_initial.py"
target.unlink(missing_ok=True)
with tempfile.TemporaryDirectory() as tmp:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("sqlalchemy.url", f"sqlite:///{Path(tmp) / 'empty.db'}")
    command.revision(config, message="initial", autogenerate=True, rev_id="0001")
generated = next((MIGRATIONS_DIR / "versions").glob("0001_*.py"))
if generated != target:
    generated.rename(target)
print(f"wrote {target}")
