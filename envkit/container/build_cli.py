"""The BuildKit build driver: a docker CLI whose BuildKit works (``DOCKER_BUILDKIT=1 docker
build --progress=plain``), for Dockerfiles that need BuildKit (``RUN --mount``, ``# syntax=``,
heredocs)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import threading
from collections import deque
from pathlib import Path

from envkit.container.build_job import (
    FAIL_TAIL_LINES,
    BuildJob,
    base_image_error,
    step_error,
    strip_ansi,
    timeout_error,
)
from envkit.container.build_result import BuildEvent, BuildStep
from envkit.errors import UserError
from envkit.reaper import OWNER_VAR, owner_token

_BK_STEP = re.compile(r"^#(\d+) \[(?:[\w.-]+ )?(\d+)/(\d+)\] (.*)$")
_BK_VERTEX = re.compile(r"^#(\d+) (.*)$")
_BK_OUTPUT = re.compile(r"^#(\d+) \d+\.\d+ ?(.*)$")


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


def _cli_command(cli: str, job: BuildJob, iidfile: str) -> list[str]:
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

    def __init__(self, job: BuildJob) -> None:
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
            return base_image_error(list(self.job.instructions), cause, image)
        return step_error(step, self.total, cause, self.outputs.get(vid or -1, deque()))

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


def build_with_cli(cli: str, job: BuildJob) -> tuple[str, list[BuildStep]]:
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
            # marked: the reaper stops the build if envkit is killed mid-build
            env={**os.environ, "DOCKER_BUILDKIT": "1", OWNER_VAR: owner_token()},
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
            raise timeout_error(job, progress.current())
        if code != 0:
            raise progress.failure(code)
        image_id = Path(iidfile).read_text().strip()
    finally:
        Path(iidfile).unlink(missing_ok=True)
    ordered = sorted(progress.steps.values(), key=lambda s: s.number)  # vertex ids: not in order
    return image_id, ordered
