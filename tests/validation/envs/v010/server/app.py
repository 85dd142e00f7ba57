"""Server of the v010 environment on OpenEnv 0.10's `create_app`, with `reset_observation_cls`.

V010_MODE changes the route set after `create_app` (one deviation each): `bad_mcp` (POST /mcp
answers without the JSON-RPC envelope, 500 on a body that is not JSON), `no_mcp` (POST /mcp
removed), `half_routes` (GET /state removed), `task_500` (`list_splits` raises),
`reset_fails` (`reset` raises, as a harness environment without its agent does).
OPENENV_MODE=production is OpenEnv's own switch.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fastapi import Request  # noqa: E402
from fastapi.responses import JSONResponse  # noqa: E402
from openenv.core.env_server.http_server import create_app  # noqa: E402

from models import V010Action, V010Observation, V010ResetObservation  # noqa: E402
from server.v010_environment import V010Environment, mode  # noqa: E402

app = create_app(V010Environment, V010Action, V010Observation, env_name="v010",
                 max_concurrent_envs=2, reset_observation_cls=V010ResetObservation)


def _drop(path: str, method: str) -> None:
    app.router.routes = [r for r in app.router.routes
                         if not (getattr(r, "path", None) == path
                                 and method in (getattr(r, "methods", None) or ()))]


if mode() in ("bad_mcp", "no_mcp"):
    _drop("/mcp", "POST")
if mode() == "half_routes":
    _drop("/state", "GET")
if mode() == "bad_mcp":
    @app.post("/mcp")
    async def mcp(request: Request):
        body = json.loads(await request.body())  # raises on garbage: HTTP 500
        return JSONResponse({"tools": [], "method": body.get("method")})
