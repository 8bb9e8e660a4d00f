"""Builds the executable schema: every SDL file of the service's packages (service.domains),
the settings' SDL (`service/organisation/settings_sdl.py`) and the custom fields'
(`service/custom_fields/sdl.py`), every resolver module's BINDABLES (`*_resolvers.py` of those
packages), and the scalars."""

from __future__ import annotations

import importlib
from typing import Any

from ariadne import load_schema_from_path, make_executable_schema
from graphql import GraphQLError, GraphQLSchema

from service.custom_fields.sdl import custom_fields_sdl
from service.domains import modules_of_kind, sdl_files
from service.graphql.scalars import BINDABLES as SCALARS
from service.organisation.settings_sdl import settings_sdl


def _schema_files() -> str:
    """The SDL files, joined in name order (as ariadne's `load_schema_from_path` would, without
    parsing each file once more on its own: the whole text is parsed once, below)."""
    return "\n".join(path.read_text(encoding="utf-8") for path in sdl_files())


def type_defs() -> str:
    return _schema_files() + "\n" + settings_sdl() + "\n" + custom_fields_sdl()


def resolver_bindables() -> list[Any]:
    bindables: list[Any] = []
    for name in modules_of_kind("resolvers"):
        bindables.extend(getattr(importlib.import_module(name), "BINDABLES", []))
    return bindables


_BUILT: list[GraphQLSchema] = []


def build_schema() -> GraphQLSchema:
    """The executable schema, built once per process: parsing the SDL (~4,000 fields) is most
    of a service's start-up, and the schema holds no state of a service (the resolvers find
    theirs in the request's context), so every embedded service of a process shares it."""
    from service.graphql.execution import wrap_resolvers

    if not _BUILT:
        try:
            built = make_executable_schema(type_defs(), *SCALARS, *resolver_bindables())
        except GraphQLError:
            for path in sdl_files():
                load_schema_from_path(str(path))  # names the file of a syntax error
            raise
        _BUILT.append(wrap_resolvers(built))
    return _BUILT[0]
