"""Print what ``GET PATH`` of an ASGI app answers, without a socket (run as ``python -c``).

Runs in the ENVIRONMENT's interpreter, which may not have envkit: standard library only.
``sys.argv``: ``[-c, "module:attr", "/schema", ...]``. The working directory and
``PYTHONPATH`` are those the server would get (:class:`envkit.envdir.launch.LaunchCandidate`).
Prints one JSON line ``{"path": {"status": int, "body": str}}`` on stdout; exits 3 when the
app cannot be imported (the traceback goes to stderr).

The request goes through the app itself (``app(scope, receive, send)``, the ASGI contract
uvicorn follows), so the answer is the one the running server gives, without binding a port,
waiting for ``/health`` or stopping a process group. The lifespan is not run: OpenEnv's
``create_app`` serves ``/schema`` and ``/metadata`` without it.
"""

import asyncio
import importlib
import json
import sys

sys.path.insert(0, "")  # `python -m uvicorn` puts the working directory first, so do we


def _load(spec):
    module, _, attr = spec.partition(":")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


async def _get(app, path):
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), (b"accept", b"application/json")],
        "client": ("127.0.0.1", 0),
        "server": ("127.0.0.1", 80),
    }
    state = {"sent": False, "status": None, "body": []}

    async def receive():
        if not state["sent"]:
            state["sent"] = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Event().wait()  # the client never disconnects

    async def send(message):
        if message["type"] == "http.response.start":
            state["status"] = message["status"]
        elif message["type"] == "http.response.body":
            state["body"].append(message.get("body", b""))

    await app(scope, receive, send)
    return {"status": state["status"], "body": b"".join(state["body"]).decode("utf-8", "replace")}


def main():
    try:
        app = _load(sys.argv[1])
    except BaseException:  # noqa: BLE001 - reported to the caller through stderr and exit 3
        import traceback

        traceback.print_exc()
        sys.exit(3)
    out = {path: asyncio.run(_get(app, path)) for path in sys.argv[2:]}
    sys.stdout.write("\n" + json.dumps(out) + "\n")
    sys.stdout.flush()


main()
