"""``build_image``: build an environment's Docker image with live progress.

The default path is docker's Python SDK (:mod:`envkit.container.build_sdk`), which always uses
the legacy builder, so Dockerfiles that need BuildKit (``RUN --mount``, ``# syntax=``,
heredocs) go through a docker CLI whose BuildKit works (:mod:`envkit.container.build_cli`),
when one exists.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from docker.errors import DockerException

from envkit.container._engine import docker_client, listed_containers
from envkit.container.build_cli import build_with_cli, find_buildkit_cli
from envkit.container.build_context import (
    LARGE_CONTEXT_BYTES,
    ContextScan,
    default_tag,
    image_labels,
    scan_context,
    valid_reference,
)
from envkit.container.build_job import BuildJob
from envkit.container.build_result import BuildEvent, BuildResult, BuildStep
from envkit.container.build_sdk import build_with_sdk
from envkit.container.dockerfile import BuildKitFeature, parse, preflight, read_dockerfile
from envkit.envdir import EnvProject
from envkit.errors import BuildError, UsageError

if TYPE_CHECKING:
    from docker import DockerClient


def build_image(
    path: str | os.PathLike[str] = ".",
    *,
    tag: str | None = None,
    build_args: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    no_cache: bool = False,
    pull: bool = False,
    platform: str | None = None,
    check: bool = True,
    on_event: Callable[[BuildEvent], None] | None = None,
    deadline: float | None = None,
) -> BuildResult:
    """Build the Docker image of the environment at ``path`` from its root ``Dockerfile``.

    Args:
        path: environment directory (holds ``openenv.yaml`` and ``Dockerfile``).
        tag: image reference; default ``<name>:<version>`` from openenv.yaml's ``name`` and
            pyproject's ``version`` (lower-cased, ``latest`` when unknown).
        build_args: ``--build-arg`` values.
        labels: extra image labels (added to the OCI and ``envkit.*`` labels).
        no_cache: build every step afresh.
        pull: always try to pull a newer base image.
        platform: ``os/arch[/variant]`` to build for.
        check: run the Dockerfile preflight (EK3xx rules) and stop on its errors.
        on_event: called with a :class:`BuildEvent` for each step, cached step, output line
            and warning (from the calling thread; keep it fast).
        deadline: a ``time.monotonic()`` value; when it passes the build is stopped (SDK
            path: the stream is abandoned and the running step's container removed; CLI
            path: the CLI's process group is killed). ``None``: no limit.

    Returns:
        The :class:`BuildResult`.

    Raises:
        UsageError: ``tag`` is not a valid image reference (exit 2).
        SpecError: no ``openenv.yaml`` or no root ``Dockerfile`` (exit 2).
        BuildTimeoutError: ``deadline`` passed before the build finished (exit 1).
        BuildError: a preflight error, or a build step failed; the message names the step and
            Dockerfile line, ``details`` holds its last 30 output lines (exit 1). Also when
            the Dockerfile needs BuildKit and no docker CLI with BuildKit is available.
        UserError: the base image is not present and cannot be pulled (exit 2).
        DockerUnavailableError: no engine answers (exit 2).
    """

    emit = on_event or (lambda _e: None)
    project = EnvProject.load(path)
    root = project.root
    meta = project.envdir.project_table
    version = meta.get("version") if isinstance(meta.get("version"), str) else None
    tag = _resolve_tag(tag, project.manifest.name, version)
    _dockerfile_path, text = read_dockerfile(root)
    checker, warnings = _run_preflight(root, text, emit) if check else (None, [])
    parsed = parse(text)
    # --no-check and a Dockerfile that does not tokenise: let the engine report the error.
    instructions = parsed.instructions if parsed.error is None else ()
    scan = scan_context(root)
    warnings += _context_warnings(scan, emit)
    job = BuildJob(
        root=root,
        tag=tag,
        build_args=dict(build_args or {}),
        labels=image_labels(root, project.manifest.name, version, labels),
        no_cache=no_cache,
        pull=pull,
        platform=platform,
        instructions=instructions,
        emit=emit,
        deadline=deadline,
    )
    features = list(parsed.buildkit) if instructions else []
    image_id, steps, builder, seconds, size = _build(job, features)
    return BuildResult(
        image_id=image_id,
        tags=[tag],
        size_bytes=size,
        seconds=seconds,
        steps=steps,
        builder=builder,
        labels=dict(job.labels),
        context_bytes=scan.total_bytes,
        warnings=warnings,
        preflight=checker,
    )


def _resolve_tag(tag: str | None, name: str, version: str | None) -> str:
    """``tag`` when valid, else the default ``<name>:<version>``.

    Raises:
        UsageError: ``tag`` is given and is not a valid image reference.
    """
    if tag is None:
        return default_tag(name, version)
    if not valid_reference(tag):
        raise UsageError(
            f"--tag {tag!r} is not a valid image reference.",
            hint="Use lower-case `name[:tag]`, e.g. `my-env:0.1.0` or "
            "`registry.example.com/team/my-env:dev`.",
        )
    return tag


def _run_preflight(
    root: Path, text: str, emit: Callable[[BuildEvent], None]
) -> tuple[str, list[str]]:
    """``(checker, warnings)`` of the EK3xx preflight; warnings are also emitted.

    Raises:
        BuildError: the preflight found errors; the build does not start.
    """
    problems, notes, checker = preflight(root, text)
    warnings: list[str] = []
    for note in notes:
        warnings.append(str(note))
        emit(BuildEvent("warning", str(note)))
    if problems:
        raise BuildError(
            f"The Dockerfile has {len(problems)} error(s) (found by {checker}); the build "
            "did not start.",
            details="\n".join(str(p) for p in problems),
            hint="Fix them, or pass --no-check to build anyway.",
        )
    return checker, warnings


def _context_warnings(scan: ContextScan, emit: Callable[[BuildEvent], None]) -> list[str]:
    """A warning (also emitted) when the context is over :data:`LARGE_CONTEXT_BYTES`."""
    if scan.total_bytes <= LARGE_CONTEXT_BYTES:
        return []
    big = ", ".join(f"{p} ({b / 1e6:.0f} MB)" for p, b in scan.biggest[:3])
    msg = (
        f"The build context is {scan.total_bytes / 1e6:.0f} MB ({scan.files} files); "
        f"largest: {big}. Add what the image does not need to .dockerignore."
    )
    emit(BuildEvent("warning", msg))
    return [msg]


def _build(
    job: BuildJob, features: list[BuildKitFeature]
) -> tuple[str, list[BuildStep], str, float, int]:
    """Run the build with the right builder: ``(image_id, steps, builder, seconds, size)``.

    Raises:
        BuildError: the Dockerfile needs BuildKit and no docker CLI has it; a step failed.
        BuildTimeoutError: the deadline passed.
    """
    start = time.monotonic()
    client = docker_client()
    try:
        previous = _image_id(client, job.tag)
        if features:
            cli = find_buildkit_cli()
            if cli is None:
                raise _no_buildkit_error(features[0])
            image_id, steps = build_with_cli(cli, job)
            builder = "docker-cli-buildkit"
        else:
            image_id, steps = build_with_sdk(client, job)
            builder = "docker-py"
        seconds = time.monotonic() - start
        size = int(client.images.get(image_id).attrs.get("Size", 0))
        if previous and previous != image_id:
            _remove_if_dangling(client, previous)
    finally:
        client.close()
    return image_id, steps, builder, seconds, size


def _no_buildkit_error(first: BuildKitFeature) -> BuildError:
    return BuildError(
        f"Dockerfile line {first.line} uses {first.what}, which needs BuildKit "
        f"(`{first.text}`), and no docker CLI with working BuildKit was found.",
        hint="Rewrite that line for the classic builder (e.g. a plain `RUN pip "
        "install ...` instead of `RUN --mount=...`; `envkit init` templates show "
        "how), or install a docker CLI with buildx (or set ENVKIT_DOCKER_CLI).",
    )


def _image_id(client: DockerClient, tag: str) -> str | None:
    try:
        return str(client.images.get(tag).id)
    except DockerException:
        return None


def _remove_if_dangling(client: DockerClient, image_id: str) -> None:
    """Remove the image the tag pointed to before this build when nothing else uses it (no
    tag left, no container): every build gets a fresh ``created`` label, so the previous
    image would otherwise pile up as ``<none>``."""
    try:
        image = client.images.get(image_id)
        if not image.tags and not listed_containers(client, {"ancestor": image_id}):
            client.images.remove(image_id, noprune=False)
    except DockerException:
        pass
