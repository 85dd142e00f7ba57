"""``build_image``: build an environment's Docker image with live progress.

The default path is docker's Python SDK, low-level streaming API
(``client.api.build(decode=True, rm=True, forcerm=True)``): ``images.build()`` only returns at
the end and leaks intermediate containers on failure. That API always uses the
legacy builder, so Dockerfiles that need BuildKit (``RUN --mount``, ``# syntax=``, heredocs)
go through a docker CLI whose BuildKit works (``DOCKER_BUILDKIT=1``), when one exists.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import queue
import re
import signal
import subprocess
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docker.errors import APIError, DockerException
from docker.utils.build import exclude_paths

from envkit._version import __version__
from envkit.container._engine import ENV_LABEL, MANIFEST_SHA_LABEL, docker_client
from envkit.container.dockerfile import (
    BuildKitFeature,
    Instruction,
    base_images,
    instruction_at_step,
    parse,
    preflight,
    read_dockerfile,
)
from envkit.envdir import EnvDir, EnvProject
from envkit.envdir.constants import MANIFEST_NAME
from envkit.errors import (
    BuildError,
    BuildTimeoutError,
    DockerUnavailableError,
    UsageError,
    UserError,
)

#: Warn when the build context (after .dockerignore) is larger than this many bytes.
LARGE_CONTEXT_BYTES = 100 * 1000 * 1000
#: Lines of a failing step's output kept for the error message.
FAIL_TAIL_LINES = 30

# docker/distribution reference grammar (reference/regexp.go), tags only (no digests).
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN_PART = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"{_DOMAIN_PART}(?:\.{_DOMAIN_PART})*(?::[0-9]+)?"
_REFERENCE = re.compile(
    rf"^(?:{_DOMAIN}/)?{_COMPONENT}(?:/{_COMPONENT})*(?::[\w][\w.-]{{0,127}})?$"
)
_STEP = re.compile(r"^Step (\d+)/(\d+) : (.*)$")
_BK_STEP = re.compile(r"^#(\d+) \[(?:[\w.-]+ )?(\d+)/(\d+)\] (.*)$")
_BK_VERTEX = re.compile(r"^#(\d+) (.*)$")
_BK_OUTPUT = re.compile(r"^#(\d+) \d+\.\d+ ?(.*)$")


@dataclass(frozen=True)
class BuildEvent:
    """Progress of a build, for a live display. The library never prints; the CLI renders.

    Attributes:
        kind: ``"step"`` (a new step starts), ``"cached"`` (the current step came from the
            cache), ``"output"`` (a line of the current step's output), ``"warning"``.
        text: the instruction (``step``), output line (``output``) or warning message.
        step: 1-based number of the current step (0 before the first).
        total: number of steps (0 when not known yet).
    """

    kind: str
    text: str
    step: int = 0
    total: int = 0


@dataclass
class BuildStep:
    """One step of a finished build.

    Attributes:
        number: 1-based step number as the builder counts it.
        instruction: the instruction, one line (``RUN pip install ...``).
        cached: the step's layer came from the build cache ("Using cache" / ``CACHED``).
        line: 1-based Dockerfile line, when known.
    """

    number: int
    instruction: str
    cached: bool = False
    line: int | None = None


@dataclass
class BuildResult:
    """What ``build_image`` produced.

    Attributes:
        image_id: ``sha256:...`` of the image.
        tags: the tags applied (``["echo-env:0.1.0"]``).
        size_bytes: image size in bytes (as ``docker image ls`` counts it).
        seconds: wall time of the build, seconds.
        steps: every step with its cache status.
        builder: ``"docker-py"`` (legacy builder through the SDK) or ``"docker-cli-buildkit"``.
        labels: the labels envkit set (OCI + ``envkit.*`` + the caller's).
        context_bytes: size of the build context after ``.dockerignore``, bytes.
        warnings: messages for the user (large context, ...).
        preflight: which checker ran the Dockerfile preflight (``None`` with ``check=False``).
    """

    image_id: str
    tags: list[str]
    size_bytes: int
    seconds: float
    steps: list[BuildStep] = field(default_factory=list)
    builder: str = "docker-py"
    labels: dict[str, str] = field(default_factory=dict)
    context_bytes: int = 0
    warnings: list[str] = field(default_factory=list)
    preflight: str | None = None

    @property
    def size_mb(self) -> float:
        """Image size in MB (10^6 bytes, as the docker CLI prints it)."""
        return self.size_bytes / 1e6

    @property
    def cache_hits(self) -> int:
        """Number of steps whose layer came from the build cache."""
        return sum(1 for s in self.steps if s.cached)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``envkit build --format json``)."""
        return {
            "image_id": self.image_id,
            "tags": list(self.tags),
            "size_bytes": self.size_bytes,
            "size_mb": round(self.size_mb, 1),
            "seconds": round(self.seconds, 2),
            "cache_hits": self.cache_hits,
            "steps_total": len(self.steps),
            "steps": [
                {
                    "number": s.number,
                    "instruction": s.instruction,
                    "cached": s.cached,
                    "line": s.line,
                }
                for s in self.steps
            ],
            "builder": self.builder,
            "labels": dict(self.labels),
            "context_bytes": self.context_bytes,
            "warnings": list(self.warnings),
            "preflight": self.preflight,
        }


@dataclass
class ContextScan:
    """The build context after ``.dockerignore``.

    Attributes:
        total_bytes: bytes of every file sent.
        files: number of files.
        biggest: ``(path, bytes)`` of the largest top-level entries (directories summed),
            largest first, at most 5.
    """

    total_bytes: int
    files: int
    biggest: list[tuple[str, int]]


def valid_reference(tag: str) -> bool:
    """True when ``tag`` is a valid image reference ``[registry/]name[:tag]`` (docker's
    reference grammar: lower-case path components, tag of at most 128 ``[\\w.-]``)."""
    name = tag.rsplit(":", 1)[0] if ":" in tag.rsplit("/", 1)[-1] else tag
    return bool(_REFERENCE.match(tag)) and len(name) <= 255


def _reference_part(text: str, fallback: str) -> str:
    out = re.sub(r"[^a-z0-9._-]+", "-", text.lower())
    out = re.sub(r"[._-]*[._-]", lambda m: "-" if len(m.group()) > 1 else m.group(), out)
    out = out.strip("._-")
    return out or fallback


def default_tag(name: str, version: str | None) -> str:
    """``<name>:<version>`` as a valid reference: lower-case, ``_`` -> ``-``; version
    characters outside ``[\\w.-]`` become ``-``; ``latest`` when the version is unknown."""
    repo = _reference_part(name.replace("_", "-"), "envkit-env")
    ver = re.sub(r"[^\w.-]", "-", version or "latest").lstrip(".-")[:128] or "latest"
    return f"{repo}:{ver}"


def scan_context(root: Path, dockerfile: str = "Dockerfile") -> ContextScan:
    """Size of the build context docker-py will send, with the same ``.dockerignore``
    semantics (``docker.utils.build.exclude_paths``, the function that makes the tar)."""

    patterns: list[str] = []
    ignore = root / ".dockerignore"
    if ignore.is_file():
        patterns = [
            ln.strip()
            for ln in ignore.read_text(encoding="utf-8", errors="replace").splitlines()
            if ln.strip() and not ln.strip().startswith("#")
        ]
    total = 0
    files = 0
    by_top: dict[str, int] = {}
    for rel in exclude_paths(str(root), patterns, dockerfile=dockerfile):
        full = root / rel
        try:
            st = full.lstat()
        except OSError:
            continue
        if not full.is_file() or full.is_symlink():
            continue
        total += st.st_size
        files += 1
        top = Path(rel).parts[0] + ("/" if len(Path(rel).parts) > 1 else "")
        by_top[top] = by_top.get(top, 0) + st.st_size
    biggest = sorted(by_top.items(), key=lambda kv: kv[1], reverse=True)[:5]
    return ContextScan(total_bytes=total, files=files, biggest=biggest)


def image_labels(
    root: Path, name: str, version: str | None, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """OCI image labels (``org.opencontainers.image.*``), ``envkit.manifest-sha256`` and
    ``envkit.env``, then ``extra`` (the caller's labels win)."""

    project = EnvDir(root).project_table
    labels = {
        "org.opencontainers.image.title": name,
        "org.opencontainers.image.created": _dt.datetime.now(_dt.UTC)
        .replace(microsecond=0)
        .isoformat()
        .replace("+00:00", "Z"),
        MANIFEST_SHA_LABEL: hashlib.sha256((root / MANIFEST_NAME).read_bytes()).hexdigest(),
        ENV_LABEL: name,
        "envkit.version": __version__,
    }
    if version:
        labels["org.opencontainers.image.version"] = version
    if isinstance(project.get("description"), str):
        labels["org.opencontainers.image.description"] = project["description"][:500]
    urls = project.get("urls") or {}
    if isinstance(urls, dict):
        lowered = {str(k).lower(): v for k, v in urls.items()}
        for key in ("source", "repository", "homepage"):
            if isinstance(lowered.get(key), str):
                labels["org.opencontainers.image.source"] = lowered[key]
                break
    labels.update(extra or {})
    return labels


def find_buildkit_cli() -> str | None:
    """A docker CLI whose BuildKit works against the engine, or ``None``.

    ``$ENVKIT_DOCKER_CLI`` when set (only that one), else every ``docker`` on ``PATH`` and
    ``/usr/bin/docker``. A CLI before 23.0 has BuildKit built in (``DOCKER_BUILDKIT=1``);
    from 23.0 it needs the buildx plugin (``docker buildx version`` must succeed). Seen on Docker
    CLI 28.x without buildx (fails) next to Debian's 20.10 (builds).
    """
    forced = os.environ.get("ENVKIT_DOCKER_CLI")
    if forced:
        candidates = [forced]
    else:
        candidates = []
        for d in os.environ.get("PATH", "").split(os.pathsep) + ["/usr/bin"]:
            exe = os.path.join(d or ".", "docker")
            real = os.path.realpath(exe)
            if (
                os.path.isfile(exe)
                and os.access(exe, os.X_OK)
                and real not in {os.path.realpath(c) for c in candidates}
            ):
                candidates.append(exe)
    for exe in candidates:
        try:
            ver = subprocess.run(
                [exe, "version", "--format", "{{.Client.Version}}"],
                capture_output=True,
                text=True,
                timeout=15,
            )
            major = int(re.match(r"(\d+)", ver.stdout.strip()).group(1))  # type: ignore[union-attr]
        except (OSError, subprocess.TimeoutExpired, AttributeError, ValueError):
            continue
        if major < 23:
            return exe
        try:
            bx = subprocess.run([exe, "buildx", "version"], capture_output=True, timeout=15)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if bx.returncode == 0:
            return exe
    return None


@dataclass(frozen=True)
class _BuildJob:
    """What one build needs, passed to either builder.

    Attributes:
        root: environment directory (the build context; its ``Dockerfile`` is built).
        tag: image reference to apply.
        build_args: ``--build-arg`` values.
        labels: every label to set.
        no_cache: build every step afresh.
        pull: always try to pull a newer base image.
        platform: ``os/arch[/variant]`` or ``None``.
        instructions: the parsed Dockerfile (to map steps to lines), possibly empty.
        emit: progress callback.
        deadline: a ``time.monotonic()`` value after which the build is stopped, or ``None``.
    """

    root: Path
    tag: str
    build_args: Mapping[str, str]
    labels: Mapping[str, str]
    no_cache: bool
    pull: bool
    platform: str | None
    instructions: tuple[Instruction, ...]
    emit: Callable[[BuildEvent], None]
    deadline: float | None = None

    def remaining(self) -> float | None:
        """Seconds left before the deadline (0 when passed), ``None`` without one."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())


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
    job = _BuildJob(
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
    job: _BuildJob, features: list[BuildKitFeature]
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
            image_id, steps = _build_with_cli(cli, job)
            builder = "docker-cli-buildkit"
        else:
            image_id, steps = _build_with_sdk(client, job)
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


def _timeout_error(job: _BuildJob, step: BuildStep | None) -> BuildTimeoutError:
    where = f" during step {step.number} `{step.instruction}`" if step is not None else ""
    return BuildTimeoutError(
        f"The build of {job.tag} exceeded the time limit{where} and was stopped.",
        hint="Give it more time with a larger --timeout, or make the slow step faster "
        "(a cached base image, fewer dependencies).",
    )


def _image_id(client: Any, tag: str) -> str | None:

    try:
        return str(client.images.get(tag).id)
    except DockerException:
        return None


def _remove_if_dangling(client: Any, image_id: str) -> None:
    """Remove the image the tag pointed to before this build when nothing else uses it (no
    tag left, no container): every build gets a fresh ``created`` label, so the previous
    image would otherwise pile up as ``<none>``."""

    try:
        image = client.images.get(image_id)
        if not image.tags and not client.containers.list(all=True, filters={"ancestor": image_id}):
            client.images.remove(image_id, noprune=False)
    except DockerException:
        pass


def _base_image_error(
    instructions: list[Instruction], cause: str, image: str | None = None
) -> UserError:
    bases = base_images(instructions)
    if image is None and bases:
        image = bases[0][0]
    line = next((ln for img, ln in bases if img == image), None)
    where = f" (Dockerfile line {line})" if line else ""
    return UserError(
        f"Base image `{image or '?'}`{where} is not on this machine and cannot be pulled: "
        f"{cause.strip().rstrip('.')}.",
        hint=f"Pull it where a registry is reachable (`docker pull {image or '<image>'}`), "
        "load or build it locally (`docker image ls` shows what exists; envkit's "
        ".ci/docker-setup.sh builds python:3.11-slim offline), or change FROM.",
    )


def _step_error(step: BuildStep | None, total: int, cause: str, output: deque[str]) -> BuildError:
    if step is None:
        return BuildError(
            f"The build failed: {cause.strip()}",
            details="\n".join(output) or None,
            hint="Fix the Dockerfile and run `envkit build` again.",
        )
    where = f" (Dockerfile line {step.line})" if step.line else ""
    of = f"/{total}" if total else ""
    return BuildError(
        f"Step {step.number}{of} `{step.instruction}`{where} failed: {cause.strip().rstrip('.')}.",
        details="\n".join(output) or None,
        hint="Fix that step and run `envkit build` again (--no-cache forces a clean rebuild).",
    )


class _SdkProgress:
    """Reads the legacy builder's ``stream`` lines: steps, cache hits, output, the running
    step's container (``---> Running in ID``, removed when the deadline passes)."""

    def __init__(self, job: _BuildJob) -> None:
        self.job = job
        self.steps: list[BuildStep] = []
        self.current: BuildStep | None = None
        self.total = 0
        self.output: deque[str] = deque(maxlen=FAIL_TAIL_LINES)
        self.container: str | None = None
        self._pending = ""

    def feed(self, text: str) -> None:
        """Add a ``stream`` chunk (may hold partial lines)."""
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            self._line(line.replace("\r", ""))

    def flush(self) -> None:
        """Handle a trailing partial line."""
        if self._pending:
            self._line(self._pending)
            self._pending = ""

    def _line(self, line: str) -> None:
        m = _STEP.match(line)
        if m:
            number, self.total = int(m.group(1)), int(m.group(2))
            title = m.group(3)
            ins = instruction_at_step(list(self.job.instructions), number, title)
            self.current = BuildStep(
                number, " ".join(title.split()), line=ins.line if ins else None
            )
            self.steps.append(self.current)
            self.output.clear()
            self.job.emit(BuildEvent("step", self.current.instruction, number, self.total))
            return
        stripped = line.strip()
        if stripped == "---> Using cache" and self.current is not None:
            self.current.cached = True
            self.job.emit(
                BuildEvent("cached", self.current.instruction, self.current.number, self.total)
            )
            return
        if stripped.startswith("---> Running in "):
            self.container = stripped.rsplit(" ", 1)[-1]
        if stripped.startswith(("---> ", "Removing intermediate container")) or not stripped:
            return
        self.output.append(strip_ansi(line.rstrip()))
        self.status(line.rstrip())

    def status(self, text: str) -> None:
        """Emit an output line for the current step."""
        number = self.current.number if self.current else 0
        self.job.emit(BuildEvent("output", text, number, self.total))

    def failure(self, chunk: Mapping[str, Any]) -> UserError:
        """The error of an ``error`` chunk: a base image that cannot be had, or a step."""
        self.flush()
        cause = str(chunk.get("errorDetail", {}).get("message") or chunk["error"])
        current = self.current
        if current is not None and current.instruction.upper().startswith("FROM"):
            words = current.instruction.split()
            image = words[1] if len(words) > 1 else None
            return _base_image_error(list(self.job.instructions), cause, image)
        return _step_error(current, self.total, cause, self.output)


def strip_ansi(text: str) -> str:
    """``text`` without ANSI escape sequences (colours, cursor moves, OSC links).

    Build steps' own programs (pip, npm, apt) colour their output; a failure's log tail in
    an error message is plain text. Decoded by rich's ANSI decoder (envkit's console library)
    rather than a regex of our own: it knows the CSI, OSC and private sequences.
    """
    if "\x1b" not in text:
        return text
    from rich.text import Text

    return Text.from_ansi(text).plain


_END = object()


def _until_deadline(stream: Any, job: _BuildJob) -> Any:
    """The chunks of ``stream``, read in a daemon thread so that waiting for the next one
    stops at the job's deadline (a silent ``RUN sleep`` sends nothing for minutes).

    Yields:
        Each chunk; ``_TIMED_OUT`` once, last, when the deadline passes first.
    """
    if job.deadline is None:
        yield from stream
        return
    chunks: queue.Queue[Any] = queue.Queue()

    def pump() -> None:
        try:
            for chunk in stream:
                chunks.put(chunk)
        except BaseException as exc:  # noqa: BLE001 - handed to the reading thread
            chunks.put(exc)
        chunks.put(_END)

    threading.Thread(target=pump, name="envkit-build-stream", daemon=True).start()
    while True:
        try:
            item = chunks.get(timeout=job.remaining())
        except queue.Empty:
            yield _TIMED_OUT
            return
        if item is _END:
            return
        if isinstance(item, BaseException):
            raise item
        yield item


_TIMED_OUT = object()


def _remove_container(client: Any, cid: str | None) -> None:
    """Kill and remove the build's running intermediate container (the build then fails
    on the engine side; ``forcerm`` would only remove it once the step ends)."""

    if not cid:
        return
    try:
        client.containers.get(cid).remove(force=True)
    except DockerException:
        pass  # already gone: the step ended between the deadline and now


def _build_with_sdk(client: Any, job: _BuildJob) -> tuple[str, list[BuildStep]]:

    progress = _SdkProgress(job)
    image_id: str | None = None
    try:
        stream = client.api.build(
            path=str(job.root),
            tag=job.tag,
            dockerfile="Dockerfile",
            decode=True,
            rm=True,
            forcerm=True,
            nocache=job.no_cache,
            pull=job.pull,
            buildargs=dict(job.build_args),
            labels=dict(job.labels),
            platform=job.platform,
        )
        for chunk in _until_deadline(stream, job):
            if chunk is _TIMED_OUT:
                _remove_container(client, progress.container)
                raise _timeout_error(job, progress.current)
            if "stream" in chunk:
                progress.feed(chunk["stream"])
            elif "error" in chunk:
                raise progress.failure(chunk)
            elif "aux" in chunk and isinstance(chunk["aux"], dict) and "ID" in chunk["aux"]:
                image_id = str(chunk["aux"]["ID"])
            elif "status" in chunk:
                status = str(chunk["status"])
                progress.status(f"{chunk['id']}: {status}" if chunk.get("id") else status)
        progress.flush()
    except APIError as exc:
        raise _sdk_api_error(exc, job) from None
    except DockerException as exc:
        raise DockerUnavailableError(
            f"The connection to the Docker engine failed during the build: {exc}.",
            hint="Check the engine and retry.",
        ) from None
    return image_id or _tagged_image_id(client, job.tag, progress.output), progress.steps


def _sdk_api_error(exc: Exception, job: _BuildJob) -> UserError:
    cause = str(getattr(exc, "explanation", None) or exc)
    if (
        "pull access denied" in cause
        or "manifest unknown" in cause
        or ("registry" in cause and "lookup" in cause)
    ):
        return _base_image_error(list(job.instructions), cause)
    return BuildError(
        f"The engine refused the build: {cause}",
        hint="Fix the Dockerfile (`envkit build` without --no-check runs the "
        "Dockerfile checks) and try again.",
    )


def _tagged_image_id(client: Any, tag: str, output: deque[str]) -> str:
    """The id of ``tag`` when the stream named none.

    Raises:
        BuildError: the tag does not exist.
    """

    try:
        return str(client.images.get(tag).id)
    except DockerException:
        raise BuildError(
            "The build finished without an image id.",
            details="\n".join(output) or None,
            hint="Re-run with --no-cache; report it if it persists.",
        ) from None


def _cli_command(cli: str, job: _BuildJob, iidfile: str) -> list[str]:
    """``<cli> build --progress=plain --iidfile F -t TAG -f Dockerfile ... ROOT``."""
    cmd = [cli, "build", "--progress=plain", "--iidfile", iidfile, "-t", job.tag]
    cmd += ["-f", str(job.root / "Dockerfile")]
    for k, v in job.build_args.items():
        cmd += ["--build-arg", f"{k}={v}"]
    for k, v in job.labels.items():
        cmd += ["--label", f"{k}={v}"]
    if job.no_cache:
        cmd.append("--no-cache")
    if job.pull:
        cmd.append("--pull")
    if job.platform:
        cmd += ["--platform", job.platform]
    cmd.append(str(job.root))
    return cmd


_BK_QUIET = ("sha256:", "DONE", "naming to", "writing image", "exporting layers", "transferring")


class _CliProgress:
    """Reads BuildKit's ``--progress=plain`` lines (``#N [k/m] TITLE``, ``#N 0.1 output``,
    ``#N CACHED``, ``#N ERROR: ...``)."""

    def __init__(self, job: _BuildJob) -> None:
        self.job = job
        self.steps: dict[int, BuildStep] = {}
        self.titles: dict[int, str] = {}
        self.outputs: dict[int, deque[str]] = {}
        self.errors: list[tuple[int | None, str]] = []
        self.total = 0

    def feed(self, line: str) -> None:
        m = _BK_STEP.match(line)
        if m:
            self._step(int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4))
            return
        m = _BK_OUTPUT.match(line)
        if m:
            vid = int(m.group(1))
            tail = self.outputs.setdefault(vid, deque(maxlen=FAIL_TAIL_LINES))
            tail.append(strip_ansi(m.group(2)))
            number = self.steps[vid].number if vid in self.steps else 0
            self.job.emit(BuildEvent("output", m.group(2), number, self.total))
            return
        m = _BK_VERTEX.match(line)
        if m:
            self._vertex(int(m.group(1)), m.group(2))
            return
        if line.startswith(("error: ", "ERROR: ")):
            self.errors.append((None, line.split(": ", 1)[1]))

    def _step(self, vid: int, k: int, total: int, raw_title: str) -> None:
        self.total = total
        title = " ".join(raw_title.split())
        self.titles[vid] = title
        if vid in self.steps:
            return
        ins = next(
            (i for i in self.job.instructions if i.short(10_000).startswith(title[:60])), None
        )
        self.steps[vid] = BuildStep(k, title, line=ins.line if ins else None)
        self.job.emit(BuildEvent("step", title, k, total))

    def _vertex(self, vid: int, rest: str) -> None:
        if rest == "CACHED" and vid in self.steps:
            step = self.steps[vid]
            step.cached = True
            self.job.emit(BuildEvent("cached", step.instruction, step.number, self.total))
        elif rest.startswith(("ERROR: ", "ERROR ")):
            self.errors.append((vid, rest.split(" ", 1)[1] if " " in rest else rest))
        elif not rest.startswith(_BK_QUIET):
            self.titles.setdefault(vid, rest)

    def failure(self, code: int) -> UserError:
        """The error of a build that exited with ``code``: a base image or a step."""
        vid, cause = next(
            ((v, c) for v, c in self.errors if v is not None),
            self.errors[0] if self.errors else (None, f"exit code {code}"),
        )
        title = self.titles.get(vid or -1, "")
        step = self.steps.get(vid or -1)
        if (
            "load metadata for" in title
            or title.upper().startswith("FROM")
            or (step is not None and step.instruction.upper().startswith("FROM"))
        ):
            image = (
                title.split("load metadata for", 1)[1].strip()
                if "load metadata for" in title
                else None
            )
            return _base_image_error(list(self.job.instructions), cause, image)
        return _step_error(step, self.total, cause, self.outputs.get(vid or -1, deque()))

    def current(self) -> BuildStep | None:
        """The step with the highest number seen so far."""
        return max(self.steps.values(), key=lambda s: s.number, default=None)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """SIGKILL the CLI's process group (the CLI and its buildx plugin); closing BuildKit's
    session cancels the build on the engine."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _build_with_cli(cli: str, job: _BuildJob) -> tuple[str, list[BuildStep]]:
    """Build with ``DOCKER_BUILDKIT=1 <cli> build --progress=plain`` and parse its output."""
    fd, iidfile = tempfile.mkstemp(prefix="envkit-iid-")
    os.close(fd)
    progress = _CliProgress(job)
    timed_out = threading.Event()
    try:
        proc = subprocess.Popen(
            _cli_command(cli, job, iidfile),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=dict(os.environ, DOCKER_BUILDKIT="1"),
            text=True,
            errors="replace",
            bufsize=1,
            start_new_session=True,  # its own process group, killed as one
        )
        timer = None
        if job.deadline is not None:
            timer = threading.Timer(
                job.remaining() or 0.0, lambda: (timed_out.set(), _kill_group(proc))
            )
            timer.daemon = True
            timer.start()
        try:
            for raw in proc.stdout or ():
                progress.feed(raw.rstrip("\n"))
            code = proc.wait()
        except BaseException:
            _kill_group(proc)
            proc.wait()
            raise
        finally:
            if timer is not None:
                timer.cancel()
        if timed_out.is_set():
            raise _timeout_error(job, progress.current())
        if code != 0:
            raise progress.failure(code)
        image_id = Path(iidfile).read_text().strip()
    finally:
        Path(iidfile).unlink(missing_ok=True)
    ordered = sorted(progress.steps.values(), key=lambda s: s.number)  # vertex ids: not in order
    return image_id, ordered
