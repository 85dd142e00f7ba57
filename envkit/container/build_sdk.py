"""The default build driver: docker's Python SDK, low-level streaming API
(``client.api.build(decode=True, rm=True, forcerm=True)``): ``images.build()`` only returns at
the end and leaks intermediate containers on failure. That API always uses the legacy builder."""

from __future__ import annotations

import queue
import re
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, cast

from docker.errors import APIError, DockerException

from envkit.container.build_job import (
    FAIL_TAIL_LINES,
    BuildJob,
    base_image_error,
    step_error,
    strip_ansi,
    timeout_error,
)
from envkit.container.build_result import BuildEvent, BuildStep
from envkit.container.dockerfile import instruction_at_step
from envkit.errors import BuildError, DockerUnavailableError, UserError

if TYPE_CHECKING:
    from docker import DockerClient

_STEP = re.compile(r"^Step (\d+)/(\d+) : (.*)$")
#: A decoded chunk of the engine's build stream (``stream``, ``error``, ``aux``, ``status``...).
Chunk = dict[str, Any]


class _SdkProgress:
    """Reads the legacy builder's ``stream`` lines: steps, cache hits, output, the running
    step's container (``---> Running in ID``, removed when the deadline passes)."""

    def __init__(self, job: BuildJob) -> None:
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

    def failure(self, chunk: Chunk) -> UserError:
        """The error of an ``error`` chunk: a base image that cannot be had, or a step."""
        self.flush()
        cause = str(chunk.get("errorDetail", {}).get("message") or chunk["error"])
        current = self.current
        if current is not None and current.instruction.upper().startswith("FROM"):
            words = current.instruction.split()
            image = words[1] if len(words) > 1 else None
            return base_image_error(list(self.job.instructions), cause, image)
        return step_error(current, self.total, cause, self.output)


_END = object()


def _until_deadline(stream: Iterable[Chunk], job: BuildJob) -> Iterator[Chunk | None]:
    """The chunks of ``stream``, read in a daemon thread so that waiting for the next one
    stops at the job's deadline (a silent ``RUN sleep`` sends nothing for minutes).

    Yields:
        Each chunk; ``None`` once, last, when the deadline passes first.
    """
    if job.deadline is None:
        yield from stream
        return
    chunks: queue.Queue[Chunk | BaseException | object] = queue.Queue()

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
            yield None
            return
        if item is _END:
            return
        if isinstance(item, BaseException):
            raise item
        yield cast(Chunk, item)


def _remove_container(client: DockerClient, cid: str | None) -> None:
    """Kill and remove the build's running intermediate container (the build then fails
    on the engine side; ``forcerm`` would only remove it once the step ends)."""
    if not cid:
        return
    try:
        client.containers.get(cid).remove(force=True)
    except DockerException:
        pass  # already gone: the step ended between the deadline and now


def build_with_sdk(client: DockerClient, job: BuildJob) -> tuple[str, list[BuildStep]]:
    """Build ``job`` with the SDK's streaming API (the legacy builder): ``(image_id, steps)``.

    Raises:
        BuildTimeoutError: the deadline passed (the running step's container is removed).
        BuildError, UserError: a step failed, or the base image cannot be had.
        DockerUnavailableError: the connection to the engine broke.
    """
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
            if chunk is None:  # the deadline passed
                _remove_container(client, progress.container)
                raise timeout_error(job, progress.current)
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


def _sdk_api_error(exc: Exception, job: BuildJob) -> UserError:
    cause = str(getattr(exc, "explanation", None) or exc)
    if (
        "pull access denied" in cause
        or "manifest unknown" in cause
        or ("registry" in cause and "lookup" in cause)
    ):
        return base_image_error(list(job.instructions), cause)
    return BuildError(
        f"The engine refused the build: {cause}",
        hint="Fix the Dockerfile (`envkit build` without --no-check runs the "
        "Dockerfile checks) and try again.",
    )


def _tagged_image_id(client: DockerClient, tag: str, output: deque[str]) -> str:
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
