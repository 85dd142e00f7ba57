"""HTTP + WebSocket server for the Prices environment (OpenEnv's `create_app`).

Run it:
    uvicorn server.app:app --port 8000      # from the environment directory
    envkit run                                    # same, waits for /health
    uv run server --port 8000               # the `server` console script (--host, --port)

Endpoints: /reset /step /state /schema /metadata /health, and the /ws session every
trainer uses. Set ENABLE_WEB_INTERFACE=true for the web UI at /web.
"""

import os

from openenv.core.env_server.http_server import create_app

try:  # installed as a package (`pip install -e .`)
    from ..models import PricesAction, PricesObservation
    from .prices_environment import PricesEnvironment
except ImportError:  # run from the environment directory (`uvicorn server.app:app`, Docker)
    from models import PricesAction, PricesObservation
    from server.prices_environment import PricesEnvironment

# Concurrent WebSocket sessions. TRL needs at least its generation batch size; every session
# gets its own environment instance, which is safe because the environment keeps all of its
# state on the instance.
MAX_CONCURRENT_ENVS = int(os.environ.get("MAX_CONCURRENT_ENVS", "16"))

app = create_app(
    PricesEnvironment,
    PricesAction,
    PricesObservation,
    env_name="prices",
    max_concurrent_envs=MAX_CONCURRENT_ENVS,
)


def main(argv: list[str] | None = None) -> None:
    """Serve the environment with uvicorn: `server [--host HOST] [--port PORT]`.

    Args:
        argv: command-line arguments without the program name (`None`: `sys.argv[1:]`).
            `--host` defaults to 127.0.0.1 (loopback only; 0.0.0.0 serves every interface, as
            in Docker), `--port` to 8000.
    """
    import argparse

    import uvicorn

    parser = argparse.ArgumentParser(prog="server", description="Serve the Prices environment.")
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default: %(default)s)")
    parser.add_argument("--port", type=int, default=8000, help="TCP port (default: %(default)s)")
    args = parser.parse_args(argv)
    uvicorn.run(app, host=args.host, port=args.port)


if __name__ == "__main__":
    main()
