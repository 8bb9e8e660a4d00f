"""Builds the executable schema: every SDL file of service/schema, the settings' SDL
(`service/settings_sdl.py`) and the custom fields' (`service/custom_fields_sdl.py`), every
resolver module's BINDABLES (service/resolvers/*.py), and the scalars."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Any

from ariadne import load_schema_from_path, make_executable_schema
from graphql import GraphQLSchema

import service.resolvers
from service.custom_fields_sdl import custom_fields_sdl
from service.graphql.scalars import BINDABLES as SCALARS
from service.settings_sdl import settings_sdl

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schema"


def type_defs() -> str:
    return (load_schema_from_path(str(SCHEMA_DIR)) + "\n" + settings_sdl() + "\n"
            + custom_fields_sdl())


def resolver_bindables() -> list[Any]:
    bindables: list[Any] = []
    for module_info in sorted(pkgutil.iter_modules(service.resolvers.__path__)):
        module = importlib.import_module(f"service.resolvers.{module_info.name}")
        bindables.extend(getattr(module, "BINDABLES", []))
    return bindables


def build_schema() -> GraphQLSchema:
    from service.graphql.execution import wrap_resolvers

    return wrap_resolvers(make_executable_schema(type_defs(), *SCALARS, *resolver_bindables()))
