"""Import a dependency the image does not have (installed in a local venv, left out of
pyproject.toml): the container exits 1 before it serves."""

import envkit_fixture_missing_dependency  # noqa: F401

import uvicorn

uvicorn.run("server.app:app", host="0.0.0.0", port=8000)
