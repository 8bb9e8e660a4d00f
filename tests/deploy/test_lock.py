"""The lock files pin every dependency pyproject.toml declares, with hashes: requirements.lock
the runtime ones (the image installs it), requirements-test.lock the runtime ones and the
`test` extra (make and CI install it), both the build backend. A dependency added to
pyproject.toml without `make lock` fails here. Names compared as PEP 503 normalises them."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from tests.deploy.dockerfile import DOCKERFILE, ROOT, stages

RUNTIME_LOCK = ROOT / "requirements.lock"
TEST_LOCK = ROOT / "requirements-test.lock"
HASH = re.compile(r"--hash=sha256:[0-9a-f]{64}")


def normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Pin:
    version: str
    hashes: int


def pins(text: str) -> dict[str, Pin]:
    """A pip-compile lock's entries, `name==version` with their `--hash` options; an entry
    pinned otherwise (a range, a URL) is kept with no version, so that it is reported."""
    found: dict[str, Pin] = {}
    for line in re.sub(r"\\\n", " ", text).splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-")):
            continue
        spec, *options = line.split()
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)", spec)
        name = normalised(match.group(1) if match else re.split(r"[\[<>=!~;@ ]", spec)[0])
        found[name] = Pin(match.group(2) if match else "",
                          sum(bool(HASH.fullmatch(option)) for option in options))
    return found


def declared(pyproject: dict[str, object], extras: tuple[str, ...] = ()) -> list[Requirement]:
    project = pyproject["project"]
    build = pyproject["build-system"]
    assert isinstance(project, dict) and isinstance(build, dict)
    texts = [*project["dependencies"], *build["requires"]]
    for extra in extras:
        texts += project["optional-dependencies"][extra]
    return [Requirement(text) for text in texts]


def unlocked(requirements: list[Requirement], lock: dict[str, Pin]) -> list[str]:
    """What `lock` leaves out or pins at a version the requirement refuses, or without hash."""
    problems = []
    for requirement in requirements:
        pin = lock.get(normalised(requirement.name))
        if pin is None:
            problems.append(f"{requirement} is not in the lock")
        elif not pin.version:
            problems.append(f"{requirement.name} is not pinned with ==")
        elif not requirement.specifier.contains(Version(pin.version), prereleases=True):
            problems.append(f"{requirement} is locked at {pin.version}")
        elif pin.hashes == 0:
            problems.append(f"{requirement.name}=={pin.version} has no hash")
    return problems


def _pyproject() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


@pytest.mark.parametrize(("lock", "extras"), [(RUNTIME_LOCK, ()), (TEST_LOCK, ("test",))],
                         ids=["runtime", "test"])
def test_every_declared_dependency_is_locked_with_hashes(
    lock: Path, extras: tuple[str, ...]
) -> None:
    problems = unlocked(declared(_pyproject(), extras), pins(lock.read_text()))
    assert not problems, f"{lock.name} is behind pyproject.toml (run `make lock`): {problems}"


@pytest.mark.parametrize("lock", [RUNTIME_LOCK, TEST_LOCK], ids=["runtime", "test"])
def test_every_locked_package_is_pinned_with_hashes(lock: Path) -> None:
    # (pip --require-hashes also refuses any other entry; this names it before an install)
    found = pins(lock.read_text())
    assert len(found) > 50
    assert [name for name, pin in found.items() if not pin.version or not pin.hashes] == []
    # No machine's own index or wheel folder is written into the lock.
    assert not re.search(r"^\s*--(extra-)?index-url|^\s*--find-links|file:/",
                         lock.read_text(), re.MULTILINE)


def test_the_test_lock_carries_the_runtime_pins() -> None:
    runtime, test = pins(RUNTIME_LOCK.read_text()), pins(TEST_LOCK.read_text())
    assert {name: test.get(name) for name in runtime} == runtime


def test_a_dependency_added_without_relocking_is_caught() -> None:
    pyproject: dict[str, object] = {
        "build-system": {"requires": ["setuptools>=69"]},
        "project": {"dependencies": ["starlette>=0.40", "Some_Package.New>=1"],
                    "optional-dependencies": {"test": ["pytest>=999"]}},
    }
    assert unlocked(declared(pyproject), pins(RUNTIME_LOCK.read_text())) == [
        "Some_Package.New>=1 is not in the lock"]
    locked = pins(TEST_LOCK.read_text())
    assert unlocked(declared(pyproject, ("test",)), locked) == [
        "Some_Package.New>=1 is not in the lock",
        f"pytest>=999 is locked at {locked['pytest'].version}"]
    # PEP 503: the lock's spelling and pyproject's need not agree.
    assert unlocked([Requirement("babel>=2"), Requirement("Jinja2")], locked) == []
    assert unlocked([Requirement("PyYAML")], pins("pyyaml==6.0.4\n")) == [
        "PyYAML==6.0.4 has no hash"]
    assert unlocked([Requirement("PyYAML")], pins("pyyaml>=6\n")) == [
        "PyYAML is not pinned with =="]


def test_the_image_and_make_install_only_from_the_locks() -> None:
    """Every pip install either checks hashes against a lock or adds nothing (--no-deps)."""
    _, found = stages(DOCKERFILE.read_text())
    installs = [part for stage in found if stage.name in ("deps", "build")
                for run in stage.all("RUN") for part in run.split("&&") if " install " in part]
    assert any("--require-hashes -r requirements.lock" in part for part in installs), installs
    assert all("--require-hashes" in part or "--no-deps" in part for part in installs), installs

    makefile = (ROOT / "Makefile").read_text()
    stamp = re.search(r"^\$\(STAMP\):(.*)\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert stamp is not None
    assert {"requirements.lock", "requirements-test.lock"} <= set(stamp.group(1).split())
    recipe = [line for line in stamp.group(2).splitlines() if "pip install" in line]
    assert any("--require-hashes -r requirements-test.lock" in line for line in recipe), recipe
    assert all("--require-hashes" in line or "--no-deps" in line for line in recipe), recipe
