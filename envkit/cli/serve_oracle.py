"""``envkit serve-oracle``: the environment's oracle as an OpenAI-compatible model, to try
``envkit eval --policy openai`` and ``inference.py`` offline."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from envkit.cli import _output
from envkit.cli._options import EnvDirArg, PythonOpt, ReplyTimeoutOpt, StartupTimeoutOpt
from envkit.evaluation.oracle_server import MODEL_ID, open_oracle_server

DEFAULT_PORT = 8011  # envkit.evaluation.oracle_server.DEFAULT_PORT (not imported: --help speed)


def serve_oracle_cmd(
    path: EnvDirArg = Path("."),
    port: Annotated[
        int,
        typer.Option("--port", "-p", min=0, max=65535, help="TCP port (0: a free one)."),
    ] = DEFAULT_PORT,
    host: Annotated[
        str,
        typer.Option("--host", help="Bind address (the default serves this machine only)."),
    ] = "127.0.0.1",
    python: PythonOpt = None,
    startup_timeout: StartupTimeoutOpt = None,
    reply_timeout: ReplyTimeoutOpt = None,
) -> None:
    """Serve the environment's oracle as an OpenAI-compatible model named `oracle`.

    Each chat completion answers the oracle's action for the observation the conversation
    shows last (a ```json block in the last user message, as `envkit eval --policy openai`
    and the generated inference.py send), so episodes reach the oracle's reward without a
    model, a key or a network. Prints the base URL on stdout; Ctrl-C stops it.

    Examples:
      envkit serve-oracle . --port 8011 &
      envkit eval . --policy openai --base-url http://127.0.0.1:8011/v1 --model oracle
      API_BASE_URL=http://127.0.0.1:8011/v1 MODEL_NAME=oracle python inference.py
    """
    server = open_oracle_server(
        path,
        host=host,
        port=port,
        python=python,
        startup_timeout_s=startup_timeout,
        reply_timeout_s=reply_timeout,
    )
    try:
        _output.info(
            f"Serving the oracle `{_output.esc(server.oracle.spec)}` as model `{MODEL_ID}` at "
            f"{server.base_url} (Ctrl-C stops it)."
        )
        _output.Output().text(server.base_url)
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM (envkit's main turns it into this)
        _output.info("Stopped.")
    finally:
        server.server_close()
        server.oracle.close()


def register(app: typer.Typer, handled: Callable) -> None:
    app.command("serve-oracle")(handled(serve_oracle_cmd))
