"""Write the next migration of one tree from what its models now say:

    python scripts/new_migration.py service|timebot "what changes"

The migrations that releases shipped are never rewritten (1.0.0: service 0001-0002, timebot
0001); this makes the next one on top, numbered after the newest, from the difference between
the models and a database migrated to the newest. Read it before committing: Alembic cannot
see renames, and a column that old code still reads is dropped only a release later
(README, "Upgrading")."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory


def main(tree: str, message: str) -> Path:
    if tree == "service":
        from service.db import MIGRATIONS_DIR
    elif tree == "timebot":
        from timebot.state.db import MIGRATIONS_DIR
    else:
        raise SystemExit(f"the tree is service or timebot, not {tree!r}")
    with tempfile.TemporaryDirectory() as tmp:
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS_DIR))
        config.set_main_option("sqlalchemy.url", f"sqlite:///{Path(tmp) / 'head.db'}")
        command.upgrade(config, "head")
        heads = ScriptDirectory.from_config(config).get_heads()
        if len(heads) != 1:
            raise SystemExit(f"{tree} has several heads ({', '.join(heads)}): merge them first")
        number = f"{int(heads[0]) + 1:04d}"
        slug = "_".join(message.lower().split())[:40]
        script = command.revision(config, message=message, autogenerate=True, rev_id=number)
    assert script is not None and not isinstance(script, list)
    path = Path(script.path)
    target = path.with_name(f"{number}_{slug}.py")
    path.rename(target)
    return target


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    print(f"wrote {main(sys.argv[1], sys.argv[2])}")
