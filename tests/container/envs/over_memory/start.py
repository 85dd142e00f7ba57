"""Declares `resources.memory_mb: 128` but holds 400 MB at start: the engine OOM-kills it."""

import uvicorn

BALLAST = bytearray(400 * 1024 * 1024)
BALLAST[::4096] = b"x" * len(BALLAST[::4096])  # touch every page so it is really resident

uvicorn.run("server.app:app", host="0.0.0.0", port=8000)
