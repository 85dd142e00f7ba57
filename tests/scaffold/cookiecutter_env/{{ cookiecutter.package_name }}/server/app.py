"""HTTP + WebSocket server for the {{ cookiecutter.project_name }} environment (OpenEnv's `create_app`).

Run it:
    uvicorn server.app:app --port 8000      # from the environment directory
    envkit run                                    # same, waits for /health
    uv run server                                 # the `server` console script

Endpoints: /reset /step /state /schema /metadata /health, and the /ws session every
trainer uses. Set ENABLE_WEB_INTERFACE=true for the web UI at /web.
"""

import os

from openenv.core.env_server.http_server import create_app

try:  # installed as a package (`pip install -e .`)
    from ..models import {{ cookiecutter.class_prefix }}Action, {{ cookiecutter.class_prefix }}Observation
    from .{{ cookiecutter.package_name }}_environment import {{ cookiecutter.class_prefix }}Environment
except ImportError:  # run from the environment directory (`uvicorn server.app:app`, Docker)
    from models import {{ cookiecutter.class_prefix }}Action, {{ cookiecutter.class_prefix }}Observation
    from server.{{ cookiecutter.package_name }}_environment import {{ cookiecutter.class_prefix }}Environment

# Concurrent WebSocket sessions. TRL needs at least its generation batch size; every session
# gets its own environment instance, which is safe because the environment keeps all of its
# state on the instance.
MAX_CONCURRENT_ENVS = int(os.environ.get("MAX_CONCURRENT_ENVS", "16"))

app = create_app(
    {{ cookiecutter.class_prefix }}Environment,
    {{ cookiecutter.class_prefix }}Action,
    {{ cookiecutter.class_prefix }}Observation,
    env_name="{{ cookiecutter.package_name }}",
    max_concurrent_envs=MAX_CONCURRENT_ENVS,
)


def main(host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve the environment with uvicorn on `host:port` (loopback by default)."""
    import uvicorn

    uvicorn.run(app, host=host, port=port)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Serve the {{ cookiecutter.project_name }} environment.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    main(host=args.host, port=args.port)
