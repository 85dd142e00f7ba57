"""The container part of ``envkit validate --docker``: run, wait, diagnose.

Run the image hardened (:mod:`envkit.container.hardening`), wait for ``GET /health``
through the published port (or the exec relay under ``--network none``), hand the URL to
the caller's ``play`` (the runtime stage), and find what only the image shows
(EK440-EK446). The container is removed afterwards whatever happens (Ctrl-C included).
The lane's orchestration (build, one deadline, one report) is :func:`run_docker` (and
:func:`validate_docker`, its keyword-argument form). It sits above :mod:`envkit.validation`:
it plays the same stages (:mod:`envkit.validation.lanes.stages`) through a container, and building
the image runs the static Dockerfile rules as a preflight.
"""

from __future__ import annotations

import os
import re
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from docker.errors import DockerException, ImageNotFound

from envkit.container._engine import ENV_LABEL, MANAGED_LABEL, docker_client
from envkit.container.build import build_image
from envkit.container.build_context import default_tag
from envkit.container.hardening import (
    HARDENED_USER,
    ContainerFacts,
    HardenedOptions,
    container_facts,
)
from envkit.container.image_python import python_versions_differ
from envkit.container.inside import listening_addresses, loopback_only, network_interfaces
from envkit.container.relay import ExecRelay
from envkit.container.run import ROOT_LABEL, stop_and_remove
from envkit.envdir import EnvDir
from envkit.errors import UsageError, UserError
from envkit.findings import Finding, Stage, codes_of
from envkit.reaper import owner_labels
from envkit.validation import report as R
from envkit.validation.config import build_selection
from envkit.validation.lanes.stages import (
    checked_root,
    read_schemas,
    report_digests,
    runtime_plan,
    runtime_stage,
    runtime_target,
    static_stage,
    train_path_skip,
    wants_runtime,
)
from envkit.validation.lanes.training import LanePlan, play_lane
from envkit.validation.options import Budget, RunOptions
from envkit.validation.report import Evaluated, ValidationReport
from envkit.validation.rules import container as RC
from envkit.wire import get_health, tls

if TYPE_CHECKING:
    from docker import DockerClient
    from docker.models.containers import Container

    from envkit.container.build_result import BuildEvent

#: Label with the lane's run id on the containers the lane starts.
LANE_LABEL = "envkit.lane"
POLL_S = 0.2
SOCKET_CHECK_S = 1.0  # seconds between looks at the container's listening sockets


@dataclass
class Started:
    """A hardened container that answered ``GET /health``.

    Attributes:
        id: container id. url: where the host reaches it. ready_s: seconds to healthy.
        relay: the exec relay (``--network none``), else ``None``.
    """

    id: str
    url: str
    ready_s: float
    relay: ExecRelay | None = None


@dataclass
class LaneOutcome:
    """What the container part of the lane found.

    Attributes:
        findings: EK44x findings (rule default severities).
        ran: EK44x codes evaluated.
        timings: seconds (``build``, ``container_start``).
        image: the image reference played.
        command: the ``docker run`` line equal to the lane's options.
    """

    findings: list[Finding] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    image: str = ""
    command: str = ""


class _Attempt:
    """One start of the image with given options; records why it failed."""

    def __init__(
        self,
        client: DockerClient,
        image: str,
        facts: ContainerFacts,
        kwargs: dict[str, Any],
        labels: dict[str, str],
        timeout_s: float,
        isolated: bool,
    ):
        self.client = client
        self.image = image
        self.facts = facts
        self.kwargs = kwargs
        self.labels = labels
        self.timeout_s = timeout_s
        self.isolated = isolated
        self.container: Container | None = None
        self.relay: ExecRelay | None = None
        self.failure: tuple[str, str] | None = None  # (kind, detail)
        # Docker's own HEALTHCHECK verdict (the image's), not envkit's GET /health check
        self.docker_healthcheck_status: str | None = None

    def run(self) -> Started | None:
        """Start and wait; ``None`` on failure (see :attr:`failure`)."""
        name = (
            f"envkit-lane-{re.sub(r'[^a-z0-9-]', '-', self.facts.name.lower())}-"
            f"{secrets.token_hex(3)}"
        )
        self.container = self.client.containers.create(
            self.image,
            name=name,
            detach=True,
            labels={**self.labels, **owner_labels()},  # removed if envkit is killed
            **self.kwargs,
        )
        start = time.monotonic()
        self.container.start()
        if self.isolated:
            self.relay = ExecRelay(self.container.id, self.facts.port)
            self.relay.start()
            url = self.relay.url
        else:
            url = ""
        deadline = start + self.timeout_s
        next_look = start + SOCKET_CHECK_S
        with httpx.Client(timeout=2.0, trust_env=False, verify=tls()) as http:
            while True:
                self.container.reload()
                state = self.container.attrs.get("State", {})
                self.docker_healthcheck_status = (state.get("Health") or {}).get("Status")
                if state.get("OOMKilled"):
                    self.failure = ("oom", "")
                    return None
                if state.get("Status") in ("exited", "dead"):
                    self.failure = ("exited", str(state.get("ExitCode")))
                    return None
                if not url:
                    url = self._published_url(state)
                # the one definition of healthy (envkit.wire), as every other lane uses
                if url and get_health(url, client=http).healthy:
                    return Started(self.container.id, url, time.monotonic() - start, self.relay)
                now = time.monotonic()
                if now >= next_look and not self.isolated:
                    next_look = now + SOCKET_CHECK_S
                    addrs = listening_addresses(self.container, self.facts.port)
                    if loopback_only(addrs):
                        self.failure = ("loopback", ", ".join(sorted(addrs)))
                        return None
                if now >= deadline:
                    addrs = listening_addresses(self.container, self.facts.port)
                    if loopback_only(addrs):
                        self.failure = ("loopback", ", ".join(sorted(addrs)))
                    else:
                        self.failure = ("timeout", ", ".join(sorted(addrs)))
                    return None
                time.sleep(POLL_S)

    def _published_url(self, state: dict[str, Any]) -> str:
        """``http://127.0.0.1:<port>`` once the engine reports the binding, else ''."""
        ports = (self.container.attrs.get("NetworkSettings") or {}).get("Ports") or {}
        bindings = ports.get(f"{self.facts.port}/tcp") or []
        if not state.get("Running") or not bindings or not bindings[0].get("HostPort"):
            return ""
        return f"http://127.0.0.1:{bindings[0]['HostPort']}"

    def logs(self, lines: int | None = RC.LOG_TAIL) -> str:
        if self.container is None:
            return ""
        try:
            data = self.container.logs(tail=lines if lines is not None else "all")
        except DockerException:
            return ""
        return data.decode("utf-8", "replace").rstrip()

    def remove(self) -> None:

        if self.relay is not None:
            self.relay.close()
            self.relay = None
        if self.container is not None:
            stop_and_remove(self.client, self.container.id, 0)


def _labels(
    facts: ContainerFacts, root: Path, run_id: str, extra: Mapping[str, str] | None
) -> dict[str, str]:

    return {
        MANAGED_LABEL: "true",
        ENV_LABEL: facts.name,
        ROOT_LABEL: str(root),
        LANE_LABEL: run_id,
        **dict(extra or {}),
    }


def _plain_kwargs(facts: ContainerFacts, options: HardenedOptions) -> dict[str, Any]:
    """The hardened options minus user, read-only, capabilities and the pids limit."""
    kw = options.create_kwargs(None)
    for key in ("user", "read_only", "cap_drop", "security_opt", "pids_limit", "tmpfs"):
        kw.pop(key, None)
    return kw


@dataclass(frozen=True)
class _LaneRun:
    """One run of the lane: what every start of the image and every diagnosis needs.

    Attributes:
        client: the ``docker.DockerClient``. image: the image reference played.
        root: environment directory. facts: its container facts. options: the hardened
            options. run_id: the lane's id (container label). labels: extra labels.
        timeout_s: seconds to wait for ``GET /health`` per start. say: progress lines.
    """

    client: DockerClient
    image: str
    root: Path
    facts: ContainerFacts
    options: HardenedOptions
    run_id: str
    labels: Mapping[str, str] | None
    timeout_s: float
    say: Callable[[str], None]

    def attempt(self, kwargs: dict[str, Any]) -> _Attempt:
        """One start of the image with docker-py ``kwargs``, labelled as this run's."""
        return _Attempt(
            self.client,
            self.image,
            self.facts,
            kwargs,
            _labels(self.facts, self.root, self.run_id, self.labels),
            self.timeout_s,
            self.options.isolated,
        )

    @property
    def judged(self) -> RC.HardenedRun:
        """The facts the container rules judge (:mod:`envkit.validation.rules.container`)."""
        return RC.HardenedRun(
            image=self.image,
            command=self.options.command(self.image),
            flags=self.options.flags(),
            user=HARDENED_USER,
            port=self.facts.port,
            memory_mb=self.facts.memory_mb,
            timeout_s=self.timeout_s,
            isolated=self.options.isolated,
        )


def _require_image(client: DockerClient, image: str) -> None:
    """Raises UserError when ``image`` does not exist on the engine."""
    try:
        client.images.get(image)
    except ImageNotFound:
        raise UserError(
            f"The image {image} does not exist on this engine.",
            hint="Build it (`envkit build`) or drop --image so "
            "`envkit validate --docker` builds it.",
        ) from None


def run_lane(
    root: Path,
    image: str,
    *,
    timeout_s: float | None = None,
    labels: Mapping[str, str] | None = None,
    play: Callable[[str], None] | None = None,
    progress: Callable[[str], None] | None = None,
) -> LaneOutcome:
    """Run ``image`` hardened, wait for health, call ``play(url)``, then look for what only
    the container shows. The container (and relay) are removed before returning or raising.

    Args:
        root: environment directory (its ``openenv.yaml`` gives the facts).
        image: image reference or id to run.
        timeout_s: start-up timeout, seconds (default ``envkit.startup_timeout_s``, 60); the
            caller caps it by what is left of the run's budget.
        labels: extra container labels.
        play: called with the server's base URL once it is healthy (the runtime stage).
        progress: short progress lines.

    Returns:
        The :class:`LaneOutcome`.

    Raises:
        DockerUnavailableError: no engine answers. ContainerError: no docker CLI for the
            ``no-network`` relay. UserError: ``image`` does not exist.
    """
    facts = container_facts(root)
    options = HardenedOptions(facts)
    out = LaneOutcome(image=image, command=options.command(image))
    client = docker_client()
    try:
        run = _LaneRun(
            client,
            image,
            root,
            facts,
            options,
            secrets.token_hex(6),
            labels,
            timeout_s if timeout_s is not None else facts.startup_timeout_s,
            progress or (lambda _s: None),
        )
        out.ran = RC.evaluated(run.judged)
        _require_image(client, image)
        run.say(
            f"starting {image} hardened ({'--network none, ' if options.isolated else ''}"
            f"uid {HARDENED_USER.split(':')[0]}, read-only)"
        )
        attempt = run.attempt(options.create_kwargs(None))
        t = time.perf_counter()
        try:
            started = attempt.run()
            out.timings["container_start"] = round(time.perf_counter() - t, 3)
            if started is None:
                out.findings.append(_diagnose(run, attempt))
                return out
            if run.options.isolated:
                out.findings += RC.interfaces(run.judged, network_interfaces(attempt.container))
            if play is not None:
                play(started.url)
            attempt.container.reload()
            oom_killed = bool(attempt.container.attrs.get("State", {}).get("OOMKilled"))
            out.findings += RC.after_play(run.judged, oom_killed, attempt.logs(None))
            return out
        finally:
            attempt.remove()
    finally:
        client.close()


def _diagnose(run: _LaneRun, attempt: _Attempt) -> Finding:
    """The finding for a hardened start that failed (cheapest evidence first): what the
    wait saw (OOM, loopback only, timeout), then the exit's log, then one plain start; the
    rules judge each (:mod:`envkit.validation.rules.container`)."""
    kind, detail = attempt.failure or ("timeout", "")
    log = attempt.logs()
    if kind in ("oom", "loopback", "timeout"):
        return RC.wait_ended(run.judged, kind, detail, log, attempt.docker_healthcheck_status)
    known = RC.exited(run.judged, detail, log)
    if known is not None:
        return known
    # No known sign: does it run without the hardening options? (one more start)
    run.say("the hardened container failed; trying once without hardening")
    plain = run.attempt(_plain_kwargs(run.facts, run.options))
    try:
        starts_plain = plain.run() is not None
    finally:
        plain.remove()
    return RC.exited_unexplained(run.judged, detail, log, starts_plain)


@dataclass(frozen=True)
class DockerOptions:
    """What only the docker lane takes.

    Attributes:
        image: image to play; ``None`` builds it first (``NAME:VERSION``).
        labels: extra labels for the image (when built) and the container.
        build_options: extra keyword arguments for :func:`envkit.container.build_image`.
        on_event: build progress (:class:`envkit.container.BuildEvent`).
    """

    image: str | None = None
    labels: Mapping[str, str] | None = None
    build_options: Mapping[str, Any] | None = None
    on_event: Callable[[BuildEvent], None] | None = None


def validate_docker(
    path: str | os.PathLike[str] = ".",
    *,
    image: str | None = None,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    episodes: int = 5,
    seed: int = 0,
    timeout_s: float | None = None,
    startup_timeout_s: float | None = None,
    reply_timeout_s: float | None = None,
    labels: Mapping[str, str] | None = None,
    build_options: Mapping[str, Any] | None = None,
    on_event: Callable[[BuildEvent], None] | None = None,
    progress: Callable[[str], None] | None = None,
    python: str | None = None,
    train_path: bool = True,
) -> ValidationReport:
    """``envkit validate --docker``: static checks, then the runtime stage played against the
    environment's image run hardened (:func:`envkit.container.lane.run_lane`).

    Args:
        path: environment directory (holds ``openenv.yaml`` and the ``Dockerfile``).
        image: image to play; ``None`` builds it first (``NAME:VERSION``, as
            :func:`envkit.container.build_image`; the build cache makes rebuilds fast).
        select, ignore, episodes, seed: as :func:`validate`.
        timeout_s: the whole run's budget in seconds (``--timeout``; ``None``: 600): the
            build, the container's start-up and the runtime stage all spend it.
        startup_timeout_s: seconds to wait for the container's ``GET /health``
            (``--startup-timeout``; default ``envkit.startup_timeout_s``, 60), never past
            the run's deadline.
        reply_timeout_s: seconds to wait for one answer (``--reply-timeout``).
        labels: extra labels for the image (when built) and the container.
        build_options: extra keyword arguments for ``build_image``.
        on_event: build progress (:class:`envkit.container.BuildEvent`).
        progress: short progress lines.
        python: interpreter that runs the oracle (the agent side, on the host) against the
            container (default as :func:`envkit.envdir.project.resolve_python`).
        train_path: play the training-path lane against the container (as :func:`validate`).

    Returns:
        A :class:`ValidationReport` with ``lane == "docker"``.

    Raises:
        UsageError, SpecError: as :func:`validate`, or no ``openenv.yaml``.
        BuildError, UserError: the build failed (nothing is left behind);
            ``BuildTimeoutError`` when the build outlives the deadline (with a
            ``build_image`` that takes one).
        DockerUnavailableError: no engine answers.
    """
    opts = RunOptions(
        python=python,
        select=select,
        ignore=ignore,
        episodes=episodes,
        seed=seed,
        timeout_s=timeout_s,
        startup_timeout_s=startup_timeout_s,
        reply_timeout_s=reply_timeout_s,
        progress=progress,
        train_path=train_path,
    )
    docker = DockerOptions(
        image=image, labels=labels, build_options=build_options, on_event=on_event
    )
    return run_docker(path, opts, docker)


def run_docker(
    path: str | os.PathLike[str], opts: RunOptions, docker: DockerOptions
) -> ValidationReport:
    """The docker lane with the run's options already made (the CLI's entry): build (or
    take) the image, run it hardened, play the runtime stage through it, and assemble one
    report; one :class:`~envkit.validation.options.Budget` for all of it. Errors as
    :func:`validate_docker`."""

    t0 = time.perf_counter()
    budget = Budget.start(opts.timeout_s)
    root = Path(path).expanduser()
    if not root.is_dir():
        raise UsageError(
            f"{root} is not a directory.",
            hint="Pass the environment's directory (it holds openenv.yaml).",
        )
    root = checked_root(root.resolve(), None, opts.episodes)
    envdir = EnvDir(root)  # the run's one reader of the files
    facts = container_facts(root)
    selection = build_selection(envdir, select=opts.select, ignore=opts.ignore)
    ev = Evaluated()
    image = docker.image or _build(root, facts.name, docker, budget, ev, opts.progress)
    static_stage(envdir, opts.progress, ev)
    played: list[bool] = []
    seen: dict[str, Any] = {}  # the /schema body, for the report's schema digest
    notes: list[str] = []  # the runtime stage's notes, then the lane's

    def play(url: str) -> None:
        plan = runtime_plan(envdir, url, static=False, wanted=wants_runtime(selection))
        if plan.not_run:
            ev.skipped.update(dict.fromkeys(codes_of(Stage.RUNTIME), plan.not_run))
        else:
            target = runtime_target(envdir, url, plan, opts, oracle_with_url=True)
            target.wanted = selection.enabled
            _launch, stage_notes = runtime_stage(target, opts, budget, ev, lane="docker")
            notes.extend(stage_notes)
        seen["schemas"] = read_schemas(url)
        skip = train_path_skip(opts, selection, plan, static=False)
        play_lane(LanePlan(envdir, url, plan.app, skip), opts, budget, ev)
        played.append(True)

    startup = opts.startup_timeout_s
    startup = startup if startup is not None else facts.startup_timeout_s
    lane = _container_stage(root, image, budget.cap(startup), opts.progress, docker, play)
    if not played:
        no_health = dict.fromkeys(
            codes_of(Stage.RUNTIME) + codes_of(Stage.TRAINING), R.CONTAINER_NO_HEALTH
        )
        ev.skipped.update(no_health)
    ev.findings += lane.findings
    ev.ran.update(lane.ran)
    for code in codes_of(Stage.RUNTIME):
        if code.startswith("EK44") and code not in lane.ran:
            ev.skipped[code] = R.NETWORK_NOT_ISOLATED
    ev.timings.update(lane.timings)
    ev.timings["total"] = time.perf_counter() - t0
    versions = python_versions_differ(image, envdir.python(opts.python))
    if versions:
        notes.append(versions)
    report = R.assemble_report(
        f"{root} @ {image}",
        "docker",
        root,
        ev,
        selection,
        R.RuntimeNote(notes=notes) if played and notes else None,
    )
    report.digests = report_digests(
        envdir, seen.get("schemas"), "" if played else R.CONTAINER_NO_HEALTH
    )
    return report


def _build(
    root: Path,
    name: str,
    docker: DockerOptions,
    budget: Budget,
    ev: Evaluated,
    progress: Callable[[str], None] | None,
) -> str:
    """Build the environment's image as ``NAME:VERSION`` within the run's deadline; its tag.

    Raises:
        BuildTimeoutError: the build outlived the run's deadline (the build is stopped).
        BuildError: a build step failed.
    """

    version = EnvDir(root).project_table.get("version")
    tag = default_tag(name, version if isinstance(version, str) else None)
    if progress:
        progress(f"building {tag}")
    kwargs = dict(docker.build_options or {})
    kwargs.setdefault("deadline", budget.deadline)
    built = build_image(root, tag=tag, labels=docker.labels, on_event=docker.on_event, **kwargs)
    ev.timings["build"] = round(built.seconds, 3)
    return tag


def _container_stage(
    root: Path,
    image: str,
    startup_s: float,
    progress: Callable[[str], None] | None,
    docker: DockerOptions,
    play: Callable[[str], None],
) -> LaneOutcome:
    """Run ``image`` hardened, waiting ``startup_s`` seconds at most for ``GET /health``
    (already capped by what is left of the run's budget), and call ``play(url)`` once it
    answers; the :class:`envkit.container.lane.LaneOutcome`."""
    return run_lane(
        root,
        image,
        timeout_s=max(0.1, startup_s),
        labels=docker.labels,
        play=play,
        progress=progress,
    )
