"""Prepare for 30 s before serving (a dataset download in `create_app()`, say): longer than
the 3 s `envkit.startup_timeout_s` the test declares."""

import time

import uvicorn

time.sleep(30)
uvicorn.run("server.app:app", host="0.0.0.0", port=8000)
