"""Builds the offline GraphQL IDE (GraphiQL from the npm registry) into service/static/graphiql.

Run by `make ide` (a step of `make run` and `make test`): `npm ci` in ide/, then ide/build.mjs
(esbuild) writes index.html, the script, the styles and Monaco's workers. A stamp keyed on the
lock file, the build script and the entry source makes a second run a no-op. Without npm (or on
any build failure) it says so and exits non-zero.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IDE_SOURCE = ROOT / "ide"
OUTPUT = ROOT / "service" / "static" / "graphiql"
STAMP = OUTPUT / ".build-stamp"
EXPECTED = ("index.html", "graphiql.js", "graphiql.css", "graphql.worker.js")


class BuildError(Exception):
    pass


def source_digest(source: Path = IDE_SOURCE) -> str:
    """What the build depends on: the lock file, package.json, the build script, the source."""
    digest = hashlib.sha256()
    inputs = [source / "package-lock.json", source / "package.json", source / "build.mjs"]
    inputs += sorted(path for path in (source / "src").rglob("*") if path.is_file())
    for path in inputs:
        if not path.is_file():
            raise BuildError(f"missing {path}")
        digest.update(str(path.relative_to(source)).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def is_up_to_date(digest: str, output: Path = OUTPUT) -> bool:
    stamp = output / STAMP.name
    return (
        stamp.is_file()
        and stamp.read_text().strip() == digest
        and all((output / name).is_file() for name in EXPECTED)
    )


def _run(command: list[str], cwd: Path) -> None:
    print("+", " ".join(command), flush=True)
    try:
        completed = subprocess.run(command, cwd=cwd, check=False)
    except OSError as error:
        raise BuildError(f"could not run {command[0]}: {error}") from error
    if completed.returncode != 0:
        raise BuildError(f"{' '.join(command)} failed with exit status {completed.returncode}")


def build(source: Path = IDE_SOURCE, output: Path = OUTPUT, force: bool = False) -> bool:
    """Build if needed; True when it built, False when already up to date."""
    digest = source_digest(source)
    if not force and is_up_to_date(digest, output):
        return False
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        raise BuildError(
            "npm and node are needed to build the GraphQL IDE (GET /graphql) from the npm "
            "registry's graphiql package; install Node.js 18+ with npm (Debian: apt-get install "
            "nodejs npm) and run `make ide` again"
        )
    _run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], source)
    _run([node, str(source / "build.mjs"), str(output)], source)
    missing = [name for name in EXPECTED if not (output / name).is_file()]
    if missing:
        raise BuildError(f"the build did not produce {', '.join(missing)} in {output}")
    (output / STAMP.name).write_text(digest + "\n")
    return True


def mark_built(source: Path = IDE_SOURCE, output: Path = OUTPUT) -> None:
    """The assets were built elsewhere from these sources (the container image's Node stage):
    check they are all there and stamp them, so that the wheel's build step finds them current."""
    missing = [name for name in EXPECTED if not (output / name).is_file()]
    if missing:
        raise BuildError(f"{', '.join(missing)} missing in {output}")
    (output / STAMP.name).write_text(source_digest(source) + "\n")


def main(argv: list[str]) -> int:
    force = "--force" in argv
    try:
        if "--mark-built" in argv:
            mark_built()
            print(f"GraphQL IDE marked as built: {OUTPUT}")
            return 0
        built = build(force=force)
    except BuildError as error:
        print(f"GraphQL IDE build FAILED: {error}", file=sys.stderr)
        return 1
    print(f"GraphQL IDE {'built' if built else 'up to date'}: {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
