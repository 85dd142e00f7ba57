"""Read root-only settings, then serve: fails as a non-root uid with PermissionError."""

import json

import uvicorn

with open("/app/settings.json", encoding="utf-8") as fh:
    SETTINGS = json.load(fh)

uvicorn.run("server.app:app", host="0.0.0.0", port=8000)
