"""Bindables shared by every area: SvcTime, SvcAmount."""

from __future__ import annotations

from typing import Any

from ariadne import ObjectType

from service.graphql.convert import iso
from service.graphql.fastpath import plain

svc_time = ObjectType("SvcTime")


@svc_time.field("ts")
@plain
def resolve_ts(value: Any, _info: Any) -> int:
    return int(value["ts"] if isinstance(value, dict) else value)


@svc_time.field("iso")
@plain
def resolve_iso(value: Any, _info: Any) -> str:
    return iso(int(value["ts"] if isinstance(value, dict) else value))


BINDABLES = [svc_time]
