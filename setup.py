"""The wheel carries the offline GraphQL IDE: before the package data is copied, `build_py`
builds service/static/graphiql (service/graphql/ide_build.py: `npm ci` and ide/build.mjs)
when it is missing or stale, so that `pip install .` (no make) serves GET /graphql too. The
assets are build output, never committed. Without Node.js and npm the build stops with a
message saying what to install. An editable install (`make`) leaves it to `make ide`."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.errors import SetupError

HERE = Path(__file__).resolve().parent


def _ide_build() -> Any:
    """service/graphql/ide_build.py on its own (stdlib only: the build environment has not
    the package's dependencies, so the `service` package is not imported)."""
    spec = importlib.util.spec_from_file_location(
        "timebot_ide_build", HERE / "service" / "graphql" / "ide_build.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildPyWithIde(build_py):  # type: ignore[misc]
    def run(self) -> None:
        if not getattr(self, "editable_mode", False):
            ide = _ide_build()
            try:
                built = ide.build()
            except ide.BuildError as error:
                raise SetupError(f"the GraphQL IDE could not be built: {error}") from error
            print(f"GraphQL IDE {'built' if built else 'up to date'}: {ide.OUTPUT}")
            self.__dict__.pop("data_files", None)  # list the assets just built
        super().run()


setup(cmdclass={"build_py": BuildPyWithIde})
