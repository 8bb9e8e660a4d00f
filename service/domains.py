"""The registry of the service's packages: each domain is one package holding its SDL
(`*.graphql`), its tables (`models`, `*_models`), rules, store and resolvers (`*_resolvers`:
each exposes BINDABLES). The schema build (service.graphql.schema) and the table registry
(service.models) find what they compose from here, by file name, without importing a
domain's `__init__`."""

from __future__ import annotations

from pathlib import Path

SERVICE_DIR = Path(__file__).resolve().parent

DOMAINS = (
    "people",
    "organisation",
    "projects",
    "time_records",
    "timesheets",
    "absences",
    "type_options",
    "expenses",
    "rates",
    "budgets",
    "custom_fields",
    "reports",
    "plannings",
    "access",
    "signin",
    "webhooks",
    "legacy",
)
# The schema's own SDL (the root types) and bindables live beside its build.
SCHEMA_PACKAGES = ("graphql", *DOMAINS)


def sdl_files() -> list[Path]:
    """Every SDL file, in the order of their names across packages (the schema prints the same
    whichever package a file sits in)."""
    found = [path for package in SCHEMA_PACKAGES
             for path in (SERVICE_DIR / package).glob("*.graphql")]
    return sorted(found, key=lambda path: path.name)


def modules_of_kind(kind: str, packages: tuple[str, ...] = SCHEMA_PACKAGES) -> list[str]:
    """The modules named `kind` or `*_<kind>` of the packages, ordered by the name before
    `_<kind>` (resolvers bind in the order their single folder once gave)."""
    found = {
        f"service.{package}.{path.stem}": path.stem.removesuffix(kind).removesuffix("_")
        for package in packages
        for path in (SERVICE_DIR / package).glob("*.py")
        if path.stem == kind or path.stem.endswith(f"_{kind}")
    }
    return sorted(found, key=lambda module: (found[module], module))
