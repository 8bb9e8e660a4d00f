"""Which release and which schema revisions this process runs: `/healthz` says them, and
`/metrics` as `timebot_build_info{version,schema}`."""

from __future__ import annotations

from functools import cache

from plumbing.release import VERSION
from timebot.config import Settings


@cache
def _heads(tree_name: str) -> str:
    if tree_name == "service":
        from service.db import schema_tree as service_tree

        tree = service_tree("sqlite://")
    else:
        from timebot.state.db import schema_tree as bot_tree

        tree = bot_tree()
    return "+".join(sorted(tree.heads()))


def schema_revisions(settings: Settings) -> str:
    """The migration heads this code brings its databases to, `service:0002,timebot:0001`
    (the service's only where this process runs it)."""
    trees = (["service"] if settings.runs_service else []) + ["timebot"]
    return ",".join(f"{name}:{_heads(name)}" for name in trees)


def build_info(settings: Settings) -> dict[str, str]:
    return {"version": VERSION, "schema": schema_revisions(settings)}


def build_info_metric(info: dict[str, str]) -> bytes:
    """The Prometheus exposition of `timebot_build_info`, the same in every worker (so written
    by whichever answers, not kept in the shared multiprocess directory)."""
    labels = ",".join(f'{key}="{value}"' for key, value in sorted(info.items()))
    return (
        "# HELP timebot_build_info The release and schema revisions this process runs\n"
        "# TYPE timebot_build_info gauge\n"
        f"timebot_build_info{{{labels}}} 1.0\n"
    ).encode()
