"""POST /graphql (the interface) and GET /graphql (the IDE), as Starlette routes."""

from __future__ import annotations

import json
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from service.graphql.execution import Executor

IDE_DIR = Path(__file__).resolve().parent.parent / "static" / "graphiql"

IDE_MISSING = """<!doctype html><title>GraphQL IDE</title>
<p>The GraphQL IDE has not been built. Run <code>make ide</code> (part of the install step).</p>"""


def graphql_routes(executor: Executor) -> list[BaseRoute]:
    async def endpoint(request: Request) -> Response:
        if request.method == "GET":
            index = IDE_DIR / "index.html"
            if index.is_file():
                return FileResponse(index, media_type="text/html")
            return HTMLResponse(IDE_MISSING)
        try:
            payload = json.loads(await request.body() or b"null")
        except (json.JSONDecodeError, UnicodeDecodeError):
            return JSONResponse({"errors": [{"message": "Body is not valid JSON."}]}, 400)
        result = await executor.run(payload, request.headers.get("apikey"))
        return JSONResponse(result.body, status_code=result.status)

    # The IDE's script, styles and Monaco workers (built by `make ide`; mounted even before
    # the build so that a later `make ide` needs no restart).
    ide_assets = StaticFiles(directory=IDE_DIR, check_dir=False)
    return [
        Route("/graphql", endpoint, methods=["GET", "POST"]),
        Mount("/graphql-ide", app=ide_assets, name="ide"),
    ]
