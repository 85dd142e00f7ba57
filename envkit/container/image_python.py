"""Which Python an image runs, next to the interpreter envkit uses on the host for the same
environment: the docker lane notes when they differ."""

from __future__ import annotations

import subprocess

from docker.errors import DockerException

from envkit.container._engine import docker_client

#: Arguments that make an interpreter print its version (``3.11.7``), on the host and in images.
PRINT_VERSION = ("-c", "import platform; print(platform.python_version())")


def python_versions_differ(image: str, python: str) -> str | None:
    """A note when ``image``'s Python (:func:`image_python_version`) and ``python``'s (the
    source lane's interpreter, which also runs the oracle here) differ in major.minor;
    ``None`` when they agree or either is unknown."""
    in_image = image_python_version(image)
    try:
        out = subprocess.run(
            [python, *PRINT_VERSION],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    on_host = out.stdout.strip()
    if not in_image or not on_host or in_image.split(".")[:2] == on_host.split(".")[:2]:
        return None
    want = ".".join(in_image.split(".")[:2])
    return (
        f"The image runs Python {in_image}; the source lane (`envkit validate` without "
        f"`--docker`) and the oracle here use {python} (Python {on_host}): dependencies can "
        "resolve, and code behave, differently between the two. Make the venv with the "
        f"image's Python (`uv venv --python {want}`) or build FROM the host's."
    )


def image_python_version(image: str) -> str | None:
    """The Python version ``image`` runs (``"3.11.7"``): its ``PYTHON_VERSION`` (the official
    python images declare it), else asked of the image's ``python`` in a throwaway container
    (no network, removed); ``None`` when neither answers."""
    try:
        client = docker_client()
    except DockerException:
        return None
    try:
        env = client.images.get(image).attrs.get("Config", {}).get("Env") or []
        declared = next((e.split("=", 1)[1] for e in env if e.startswith("PYTHON_VERSION=")), None)
        if declared:
            return declared
        out = client.containers.run(
            image,
            ["python", *PRINT_VERSION],
            entrypoint=[],
            network_disabled=True,
            remove=True,
            stdout=True,
            stderr=False,
        )
        text = (out or b"").decode("utf-8", "replace").strip()
        return text if text[:1].isdigit() else None
    except DockerException:
        return None
    finally:
        client.close()
