"""Log episodes next to the code: fails on a read-only root filesystem (EROFS)."""

import uvicorn

with open("/app/episodes.log", "a", encoding="utf-8") as fh:
    fh.write("server started\n")

uvicorn.run("server.app:app", host="0.0.0.0", port=8000)
