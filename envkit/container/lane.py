"""The container lane of ``envkit validate`` (``--docker``).

Build the image (or take ``--image``), run it hardened (:mod:`envkit.container.hardening`),
wait for ``GET /health`` through the published port (or the exec relay under
``--network none``), then play the ordinary runtime stage against that URL
(``envkit.validation.validate(path, url=...)``) and add what only the image shows
(EK440-EK446). The container is removed afterwards whatever happens (Ctrl-C included).
"""

from __future__ import annotations

import os
import re
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit.container._engine import ENV_LABEL, MANAGED_LABEL, docker_client
from envkit.container.hardening import (
    HARDENED_USER,
    ContainerFacts,
    HardenedOptions,
    container_facts,
)
from envkit.findings import Finding, Rule
from envkit.validation.rules import container as RC

#: Label with the lane's run id on the containers the lane starts.
LANE_LABEL = "envkit.lane"
POLL_S = 0.2
SOCKET_CHECK_S = 1.0  # seconds between looks at the container's listening sockets
LOG_TAIL = 30

_EROFS = ("read-only file system", "errno 30]")
_EACCES = ("permission denied", "errno 13]", "operation not permitted", "errno 1]")
_NO_NET = (
    "network is unreachable",
    "errno 101]",
    "name or service not known",
    "temporary failure in name resolution",
    "errno -3]",
    "errno -2]",
    "no address associated with hostname",
)


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
    relay: Any = None


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


def _has(text: str, needles: Sequence[str]) -> bool:
    low = text.lower()
    return any(n in low for n in needles)


def _exec(container: Any, argv: list[str]) -> tuple[int, str]:
    """Run ``argv`` in the container as the lane's user; (exit code, output)."""
    from docker.errors import DockerException

    try:
        code, out = container.exec_run(argv, user=HARDENED_USER, demux=False)
    except DockerException as exc:
        return 126, str(exc)
    return int(code if code is not None else 1), (out or b"").decode("utf-8", "replace")


def listening_addresses(container: Any, port: int) -> set[str]:
    """Addresses the container listens on for TCP ``port`` (``0.0.0.0``, ``127.0.0.1``,
    ``::``, ``::1``, ...), read from ``/proc/net/tcp{,6}`` inside it (no traffic sent)."""
    code, out = _exec(container, ["cat", "/proc/net/tcp", "/proc/net/tcp6"])
    if code != 0 and not out.strip().startswith("sl"):
        code, out = _exec(
            container,
            [
                "python3",
                "-c",
                (
                    "import sys\nfor f in ('/proc/net/tcp',"
                    "'/proc/net/tcp6'):\n try: sys.stdout.write(open(f)."
                    "read())\n except OSError: pass"
                ),
            ],
        )
    found: set[str] = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 4 or parts[3] != "0A" or ":" not in parts[1]:  # 0A = LISTEN
            continue
        addr, _, hexport = parts[1].rpartition(":")
        try:
            if int(hexport, 16) != port:
                continue
            raw = bytes.fromhex(addr)
        except ValueError:
            continue
        if len(raw) == 4:
            found.add(".".join(str(b) for b in reversed(raw)))
        elif len(raw) == 16:
            words = [raw[i : i + 4][::-1] for i in range(0, 16, 4)]
            import ipaddress

            found.add(str(ipaddress.IPv6Address(b"".join(words))))
    return found


def _loopback_only(addrs: set[str]) -> bool:
    return bool(addrs) and all(a.startswith("127.") or a == "::1" for a in addrs)


def network_interfaces(container: Any) -> list[str] | None:
    """Interface names inside the container (``/proc/net/dev``), ``None`` if unreadable."""
    code, out = _exec(container, ["cat", "/proc/net/dev"])
    if code != 0:
        return None
    return [ln.split(":", 1)[0].strip() for ln in out.splitlines()[2:] if ":" in ln]


class _Attempt:
    """One start of the image with given options; records why it failed."""

    def __init__(
        self,
        client: Any,
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
        self.container: Any = None
        self.relay: Any = None
        self.failure: tuple[str, str] | None = None  # (kind, detail)
        self.health_status: str | None = None

    def run(self) -> Started | None:
        """Start and wait; ``None`` on failure (see :attr:`failure`)."""
        import httpx

        from envkit.container.relay import ExecRelay

        name = (
            f"envkit-lane-{re.sub(r'[^a-z0-9-]', '-', self.facts.name.lower())}-"
            f"{secrets.token_hex(3)}"
        )
        self.container = self.client.containers.create(
            self.image, name=name, detach=True, labels=self.labels, **self.kwargs
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
        with httpx.Client(timeout=2.0, trust_env=False) as http:
            while True:
                self.container.reload()
                state = self.container.attrs.get("State", {})
                self.health_status = (state.get("Health") or {}).get("Status")
                if state.get("OOMKilled"):
                    self.failure = ("oom", "")
                    return None
                if state.get("Status") in ("exited", "dead"):
                    self.failure = ("exited", str(state.get("ExitCode")))
                    return None
                if not url:
                    url = self._published_url(state)
                try:
                    if url and http.get(f"{url}/health").status_code == 200:
                        return Started(self.container.id, url, time.monotonic() - start, self.relay)
                except httpx.HTTPError:
                    pass
                now = time.monotonic()
                if now >= next_look and not self.isolated:
                    next_look = now + SOCKET_CHECK_S
                    addrs = listening_addresses(self.container, self.facts.port)
                    if _loopback_only(addrs):
                        self.failure = ("loopback", ", ".join(sorted(addrs)))
                        return None
                if now >= deadline:
                    addrs = listening_addresses(self.container, self.facts.port)
                    if _loopback_only(addrs):
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

    def logs(self, lines: int | None = LOG_TAIL) -> str:
        from docker.errors import DockerException

        if self.container is None:
            return ""
        try:
            data = self.container.logs(tail=lines if lines is not None else "all")
        except DockerException:
            return ""
        return data.decode("utf-8", "replace").rstrip()

    def remove(self) -> None:
        from envkit.container.run import _stop_and_remove

        if self.relay is not None:
            self.relay.close()
            self.relay = None
        if self.container is not None:
            _stop_and_remove(self.client, self.container.id, 0)


def _labels(
    facts: ContainerFacts, root: Path, run_id: str, extra: Mapping[str, str] | None
) -> dict[str, str]:
    from envkit.container.run import ROOT_LABEL

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
        timeout_s: start-up timeout, seconds (default ``envkit.startup_timeout_s``, 60).
        labels: extra container labels.
        play: called with the server's base URL once it is healthy (the runtime stage).
        progress: short progress lines.

    Returns:
        The :class:`LaneOutcome`.

    Raises:
        DockerUnavailableError: no engine answers. ContainerError: no docker CLI for the
            ``no-network`` relay. UserError: ``image`` does not exist.
    """
    from docker.errors import ImageNotFound

    from envkit.errors import UserError

    say = progress or (lambda _s: None)
    facts = container_facts(root)
    options = HardenedOptions(facts)
    out = LaneOutcome(image=image, command=options.command(image))
    out.ran = [
        r.code
        for r in (
            RC.PORT_UNREACHABLE,
            RC.NEEDS_ROOT,
            RC.WRITES_ROOTFS,
            RC.MEMORY_EXCEEDED,
            RC.COLD_START_SLOW,
            RC.CONTAINER_START_FAILED,
        )
    ]
    if options.isolated:
        out.ran.append(RC.NETWORK_NOT_HONOURED.code)
    timeout = timeout_s if timeout_s is not None else facts.startup_timeout_s
    run_id = secrets.token_hex(6)
    client = docker_client()
    try:
        try:
            client.images.get(image)
        except ImageNotFound:
            raise UserError(
                f"The image {image} does not exist on this engine.",
                hint="Build it (`envkit build`) or drop --image so "
                "`envkit validate --docker` builds it.",
            ) from None
        say(
            f"starting {image} hardened ({'--network none, ' if options.isolated else ''}"
            f"uid {HARDENED_USER.split(':')[0]}, read-only)"
        )
        attempt = _Attempt(
            client,
            image,
            facts,
            options.create_kwargs(None),
            _labels(facts, root, run_id, labels),
            timeout,
            options.isolated,
        )
        t = time.perf_counter()
        try:
            started = attempt.run()
            out.timings["container_start"] = round(time.perf_counter() - t, 3)
            if started is None:
                out.findings.append(
                    _diagnose(
                        client, attempt, facts, options, image, root, run_id, labels, timeout, say
                    )
                )
                return out
            if options.isolated:
                names = network_interfaces(attempt.container)
                if names is not None and set(names) - {"lo"}:
                    out.findings.append(
                        _finding(
                            RC.NETWORK_NOT_HONOURED,
                            options,
                            image,
                            "With `network.mode: no-network` the container must have no network "
                            f"interface but loopback; it has {', '.join(sorted(set(names)))}.",
                        )
                    )
            if play is not None:
                play(started.url)
            attempt.container.reload()
            state = attempt.container.attrs.get("State", {})
            if state.get("OOMKilled"):
                out.findings.append(
                    _finding(
                        RC.MEMORY_EXCEEDED,
                        options,
                        image,
                        f"The container must stay within {facts.memory_mb} MB; the engine killed "
                        "it for exceeding that during the runtime stage (OOMKilled).",
                        attempt.logs(),
                    )
                )
            log = attempt.logs(None)
            if _has(log, _EROFS):
                out.findings.append(
                    _finding(
                        RC.WRITES_ROOTFS,
                        options,
                        image,
                        "The server must write only under `/tmp`; during the runtime stage it "
                        "failed with `Read-only file system` (EROFS).",
                        _matching(log, _EROFS),
                    )
                )
            if options.isolated and _has(log, _NO_NET):
                out.findings.append(
                    _finding(
                        RC.NETWORK_NOT_HONOURED,
                        options,
                        image,
                        "With `network.mode: no-network` the environment must not use the "
                        "network; during the runtime stage it hit network errors.",
                        _matching(log, _NO_NET),
                    )
                )
            return out
        finally:
            attempt.remove()
    finally:
        client.close()


def _matching(log: str, needles: Sequence[str], limit: int = 8) -> str:
    lines = [ln for ln in log.splitlines() if _has(ln, needles)]
    return "\n".join(lines[-limit:])


def _finding(
    rule: Rule, options: HardenedOptions, image: str, message: str, log: str = ""
) -> Finding:
    text = message
    if log.strip():
        text += f" Log tail:\n{log.strip()}\n"
    else:
        text += " "
    text += f"Reproduce: `{options.command(image)}` (or `envkit run --docker --hardened`)."
    return rule.finding(text, image=image, docker_run=options.flags(), log_tail=log)


def _diagnose(
    client: Any,
    attempt: _Attempt,
    facts: ContainerFacts,
    options: HardenedOptions,
    image: str,
    root: Path,
    run_id: str,
    labels: Mapping[str, str] | None,
    timeout: float,
    say: Callable[[str], None],
) -> Finding:
    """The finding for a hardened start that failed (cheapest evidence first)."""
    kind, detail = attempt.failure or ("timeout", "")
    log = attempt.logs()
    healthy = " (its HEALTHCHECK reports `healthy`)" if attempt.health_status == "healthy" else ""
    if kind == "oom":
        return _finding(
            RC.MEMORY_EXCEEDED,
            options,
            image,
            f"The container must start within {facts.memory_mb} MB of memory; the "
            "engine killed it for exceeding that (OOMKilled).",
            log,
        )
    if kind == "loopback":
        return _finding(
            RC.PORT_UNREACHABLE,
            options,
            image,
            f"The server must listen on every address so `GET /health` answers "
            f"through the published port; it listens on {detail} port {facts.port} "
            f"only{healthy}, so the port mapping cannot reach it.",
            log,
        )
    if kind == "timeout":
        listening = (
            f"it listens on {detail} port {facts.port} but /health never returned 200"
            if detail
            else f"nothing listens on port {facts.port} yet"
        )
        return _finding(
            RC.COLD_START_SLOW,
            options,
            image,
            f"The container must answer `GET /health` within {timeout:g} s; {listening}.",
            log,
        )
    exit_code = detail
    if _has(log, _EROFS):
        return _finding(
            RC.WRITES_ROOTFS,
            options,
            image,
            "The server must write only under `/tmp` (the root filesystem is "
            f"read-only); it exited with code {exit_code} after `Read-only file "
            "system` (EROFS).",
            log,
        )
    if _has(log, _EACCES):
        return _finding(
            RC.NEEDS_ROOT,
            options,
            image,
            f"The image must run as an arbitrary non-root uid ({HARDENED_USER}); "
            f"it exited with code {exit_code} after a permission error.",
            log,
        )
    if options.isolated and _has(log, _NO_NET):
        return _finding(
            RC.NETWORK_NOT_HONOURED,
            options,
            image,
            "With `network.mode: no-network` the environment must start without "
            f"the network; under `--network none` it exited with code {exit_code} "
            "after a network error.",
            log,
        )
    # No known signature: does it run without the hardening options? (one more start)
    say("the hardened container failed; trying once without hardening")
    plain = _Attempt(
        client,
        image,
        facts,
        _plain_kwargs(facts, options),
        _labels(facts, root, run_id, labels),
        timeout,
        options.isolated,
    )
    try:
        ok = plain.run() is not None
    finally:
        plain.remove()
    if ok:
        return _finding(
            RC.NEEDS_ROOT,
            options,
            image,
            f"The image must run hardened (uid {HARDENED_USER}, read-only, no "
            f"capabilities); it exited with code {exit_code} that way, but starts "
            "without those options.",
            log,
        )
    return _finding(
        RC.CONTAINER_START_FAILED,
        options,
        image,
        f"The container must answer `GET /health`; it exited with code "
        f"{exit_code} before that (also without the hardening options).",
        log,
    )


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
    on_event: Callable[[Any], None] | None = None,
    progress: Callable[[str], None] | None = None,
    python: str | None = None,
) -> Any:
    """``envkit validate --docker``: static checks, then the runtime stage played against the
    environment's image run hardened.

    Args:
        path: environment directory (holds ``openenv.yaml`` and the ``Dockerfile``).
        image: image to play; ``None`` builds it first (``NAME:VERSION``, as
            :func:`envkit.container.build_image`; the build cache makes rebuilds fast).
        select, ignore, episodes, seed: as :func:`envkit.validation.validate`.
        timeout_s: the runtime stage's budget in seconds (``--timeout``); also caps the
            start-up timeout.
        startup_timeout_s: seconds to wait for the container's ``GET /health``
            (``--startup-timeout``; default ``envkit.startup_timeout_s``, 60).
        reply_timeout_s: seconds to wait for one answer (``--reply-timeout``).
        labels: extra labels for the image (when built) and the container.
        build_options: extra keyword arguments for ``build_image``.
        on_event: build progress (:class:`envkit.container.BuildEvent`).
        progress: short progress lines.
        python: interpreter that runs the oracle (the agent side, on the host) against the
            container (default as :func:`envkit.project.resolve_python`).

    Returns:
        A :class:`~envkit.validation.report.ValidationReport` with ``lane == "docker"``.

    Raises:
        UsageError, SpecError: as :func:`envkit.validation.validate`, or no ``openenv.yaml``.
        BuildError, UserError: the build failed (nothing is left behind).
        DockerUnavailableError: no engine answers.
    """
    from envkit.container.build import _pyproject, build_image, default_tag
    from envkit.errors import UsageError
    from envkit.validation import validate
    from envkit.validation.config import build_selection
    from envkit.validation.report import CheckResult, ValidationReport

    root = Path(path).expanduser()
    if not root.is_dir():
        raise UsageError(
            f"{root} is not a directory.",
            hint="Pass the environment's directory (it holds openenv.yaml).",
        )
    root = root.resolve()
    facts = container_facts(root)
    selection = build_selection(root, select=select, ignore=ignore)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    if image is None:
        version = _pyproject(root).get("version")
        tag = default_tag(facts.name, version if isinstance(version, str) else None)
        if progress:
            progress(f"building {tag}")
        built = build_image(
            root, tag=tag, labels=labels, on_event=on_event, **dict(build_options or {})
        )
        timings["build"] = round(built.seconds, 3)
        image = tag
    reports: list[Any] = []

    def play(url: str) -> None:
        reports.append(
            validate(
                root,
                url=url,
                python=python,
                select=select,
                ignore=ignore,
                episodes=episodes,
                seed=seed,
                timeout_s=timeout_s,
                reply_timeout_s=reply_timeout_s,
                progress=progress,
                oracle_with_url=True,
            )
        )

    startup = startup_timeout_s if startup_timeout_s is not None else facts.startup_timeout_s
    if timeout_s is not None:
        startup = min(startup, timeout_s)
    lane = run_lane(root, image, timeout_s=startup, labels=labels, play=play, progress=progress)
    if reports:
        base = reports[0]
        why = ""
    else:
        base = validate(root, static=True, select=select, ignore=ignore, progress=progress)
        why = "the container did not answer GET /health (see EK44x)"
    mine = []
    for f in lane.findings:
        if selection.enabled(f.code):
            f.severity = selection.severity_of(f.code, f.severity)
            mine.append(f)
    checks = []
    for c in base.checks:
        if c.code.startswith("EK44") and selection.enabled(c.code):
            found = [f for f in mine if f.code == c.code]
            if found or c.code in lane.ran:
                failed = any(f.severity.value == "error" for f in found)
                c = CheckResult(
                    c.code, c.name, c.stage, "failed" if failed else "passed", "", found
                )
            else:
                c = CheckResult(
                    c.code, c.name, c.stage, "skipped", "declared network is not `no-network`", []
                )
        elif why and c.stage == "runtime" and c.status == "skipped" and c.reason == "--static":
            c = CheckResult(c.code, c.name, c.stage, "skipped", why, c.findings)
        checks.append(c)
    timings.update(base.timings)
    timings.update(lane.timings)
    timings["total"] = time.perf_counter() - t0
    return ValidationReport(
        target=f"{root} @ {image}",
        findings=base.findings + mine,
        checks=checks,
        timings=timings,
        root=root,
        lane="docker",
    )
