"""EK440-EK449: the container lane (``envkit validate --docker``).

The lane runs the environment's image the way OpenEnv 0.10's validator and careful hosts do
(read-only root filesystem, uid 65532, every capability dropped, ``no-new-privileges``, a pids
limit, the declared memory and CPU, ``/tmp`` the only writable place, the port published on
127.0.0.1) and reports what only the image shows. Every message carries the exact
``docker run`` flags used, so the finding can be reproduced by hand with
``envkit run --docker --hardened``.

The rules judge here what the lane saw: :mod:`envkit.container.lane` (a floor above
:mod:`envkit.validation`) runs the container and hands its facts down as plain data
(:class:`HardenedRun`, the log text, the exit code, what the wait saw), and the functions at
the end of this module decide the finding and word it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from envkit.envdir.constants import DEFAULT_APP
from envkit.findings import Finding, Rule, Severity, register

PORT_UNREACHABLE = register(
    "EK440",
    "container-port-unreachable",
    Severity.ERROR,
    rfc008="runtime.startup",
    summary="The server in the image listens on loopback only: unreachable through the port "
    "mapping while the container looks healthy.",
    what="Inside the hardened container the server listens on the manifest's port on every "
    "address (`0.0.0.0` or `::`), so `GET /health` answers through the published port. "
    "The lane reads the container's listening sockets (`/proc/net/tcp`) to tell a "
    "loopback bind from a slow start.",
    why="A `HEALTHCHECK` that probes `127.0.0.1` from inside passes, so the container reports "
    "`healthy`, but a Hugging Face Space (and `docker run -p`) forwards to the container's "
    "network interface: every request from outside is refused.",
    example=f'`CMD ["uvicorn", "{DEFAULT_APP}", "--host", "127.0.0.1", "--port", '
    '"8000"]` in the Dockerfile.',
    fix="Bind every interface: `--host 0.0.0.0` in the Dockerfile's `CMD` (or "
    '`uvicorn.run(app, host="0.0.0.0", ...)`).',
)
NEEDS_ROOT = register(
    "EK441",
    "container-needs-root",
    Severity.ERROR,
    rfc008="runtime.host_containment",
    summary="The image only runs as root (or only without the hardening options).",
    what="The image starts and answers `GET /health` as an arbitrary non-root uid (65532) "
    "with every capability dropped and `no-new-privileges`. A `PermissionError` "
    "(`EACCES`) in the log, or a start that fails hardened but succeeds without the "
    "options, is reported here.",
    why="OpenEnv 0.10's validator runs images as uid 65532 and Hugging Face Spaces run them "
    "as uid 1000: an image that reads a root-only file, binds a port below 1024 or "
    "changes ownership at start fails there while `docker run` as root works.",
    example="A Dockerfile without `USER` that writes `config.json` with mode 600 at build "
    "time and reads it when the server starts.",
    fix="Make what the server reads at run time world-readable (`chmod a+rX`), keep state "
    "under `/tmp`, use a port above 1024, and test with "
    "`envkit run --docker --hardened`.",
)
WRITES_ROOTFS = register(
    "EK442",
    "container-writes-rootfs",
    Severity.ERROR,
    rfc008="runtime.host_containment",
    summary="The server writes outside `/tmp`: it fails on a read-only root filesystem.",
    what="With `--read-only` and a tmpfs on `/tmp`, nothing the server does at start or in "
    "an episode fails with `EROFS` (`[Errno 30] Read-only file system`).",
    why="OpenEnv 0.10's validator and hardened hosts mount the image read-only; writes to "
    "`/app`, `$HOME` or the venv (logs, caches, `.pyc` files, SQLite databases) crash "
    "the server there.",
    example='`open("/app/episodes.log", "a")` when the server starts.',
    fix="Write under `/tmp` (or `tempfile.gettempdir()`); set `HOME=/tmp` and "
    "`PYTHONDONTWRITEBYTECODE=1` in the Dockerfile; download models at build time.",
)
MEMORY_EXCEEDED = register(
    "EK443",
    "container-memory-exceeded",
    Severity.ERROR,
    rfc008="runtime.resource_bounds",
    summary="The container was killed for exceeding its declared memory.",
    what="With `--memory` set to `validation.resources.memory_mb` (1024 MB when undeclared) "
    "and no swap, the engine never reports the container `OOMKilled` during start-up "
    "or the runtime stage.",
    why="The declared resources are what schedulers and OpenEnv's validator give the "
    "environment; an environment that needs more is killed mid-episode on them.",
    example="`resources: {memory_mb: 256}` for a server that loads a 1 GB model at import.",
    fix="Raise `validation.resources.memory_mb` to what the server needs (measure with "
    "`docker stats`), or load less.",
)
COLD_START_SLOW = register(
    "EK444",
    "container-cold-start-slow",
    Severity.ERROR,
    rfc008="runtime.startup",
    summary="The container does not answer `GET /health` within the start-up timeout.",
    what="The hardened container answers `GET /health` with 200 through the published port "
    "within `envkit.startup_timeout_s` seconds (60 when undeclared).",
    why="Spaces, OpenEnv's validator (30 s) and training harnesses give up on environments "
    "that start slowly; downloads or compilation at start also repeat on every replica.",
    example="A server that downloads a dataset in `create_app()` on every start.",
    fix="Move slow work into the image build (`RUN python -m my_env.prefetch`), or raise "
    "`envkit.startup_timeout_s` if the wait is genuine.",
)
NETWORK_NOT_HONOURED = register(
    "EK445",
    "container-network-not-honoured",
    Severity.ERROR,
    rfc008="runtime.network_policy",
    summary="`network.mode: no-network` is declared, but the environment needs the network.",
    what="With `validation.network.mode: no-network` the lane runs the container with "
    "`--network none` and checks from inside that only the loopback interface exists "
    "(`/proc/net/dev`; no traffic is sent anywhere). The environment must then start and "
    "play without network errors (`Network is unreachable`, name resolution failures).",
    why="`no-network` promises graders and trainers a sealed environment: they run it "
    "without a network, where an environment that calls out fails (or, worse, its "
    "results depend on what it fetched).",
    example="A server that opens a socket to an API in `reset()` while declaring "
    "`network: {mode: no-network}`.",
    fix="Remove the network use (ship the data in the image), or declare "
    "`network: {mode: public}` (or `allowlist` with `allowed_hosts`).",
)
CONTAINER_START_FAILED = register(
    "EK446",
    "container-start-failed",
    Severity.ERROR,
    rfc008="runtime.startup",
    summary="The hardened container exits before it answers `GET /health`, for a reason "
    "EK441-EK445 do not cover.",
    what="The image's container starts and answers `GET /health`; the finding carries the "
    "exit code and the log tail when it does not.",
    why="What users deploy is the image: a missing file in the build context, a dependency "
    "left out of the image, or a wrong `CMD` only shows there.",
    example="`ModuleNotFoundError: No module named 'numpy'` because `numpy` is installed in "
    "the local venv but missing from pyproject.toml.",
    fix="Fix the error in the log tail; reproduce with `envkit run --docker --hardened`.",
)


# -- judging what the lane saw ---------------------------------------------------------------
#: Log text of a write to the read-only root filesystem (EK442).
EROFS_SIGNS = ("read-only file system", "errno 30]")
#: Log text of a permission error (EK441).
EACCES_SIGNS = ("permission denied", "errno 13]", "operation not permitted", "errno 1]")
#: Log text of a network error (EK445 under ``no-network``).
NO_NETWORK_SIGNS = (
    "network is unreachable",
    "errno 101]",
    "name or service not known",
    "temporary failure in name resolution",
    "errno -3]",
    "errno -2]",
    "no address associated with hostname",
)


@dataclass(frozen=True)
class HardenedRun:
    """The facts of one hardened run of the image, as the container lane hands them down.

    Attributes:
        image: the image reference played.
        command: the ``docker run`` line with the lane's options (each finding's reproduction).
        flags: those options as ``docker run`` flags (a finding's ``docker_run``).
        user: the ``uid:gid`` the container runs as.
        port: the manifest's port inside the container.
        memory_mb: the container's memory limit, MiB.
        timeout_s: seconds the lane waits for ``GET /health``.
        isolated: run with ``--network none`` (``network.mode: no-network``).
    """

    image: str
    command: str
    flags: Sequence[str]
    user: str
    port: int
    memory_mb: int
    timeout_s: float
    isolated: bool


def evaluated(run: HardenedRun) -> list[str]:
    """The codes a run of the lane evaluates (EK445 only under ``no-network``)."""
    rules = [
        PORT_UNREACHABLE,
        NEEDS_ROOT,
        WRITES_ROOTFS,
        MEMORY_EXCEEDED,
        COLD_START_SLOW,
        CONTAINER_START_FAILED,
    ]
    if run.isolated:
        rules.append(NETWORK_NOT_HONOURED)
    return [r.code for r in rules]


def wait_ended(
    run: HardenedRun, kind: str, detail: str, log: str, healthcheck: str | None
) -> Finding:
    """The finding for a start the wait itself ended (EK443, EK440, EK444).

    Args:
        kind: ``"oom"`` (killed for memory), ``"loopback"`` (listening on loopback only) or
            ``"timeout"`` (no 200 from ``GET /health`` in time).
        detail: the addresses the server listens on, comma-separated (``""``: none).
        log: the container's log tail.
        healthcheck: Docker's verdict of the image's own ``HEALTHCHECK`` (``"healthy"``...),
            not envkit's ``GET /health``; ``None`` when the image has none.
    """
    if kind == "oom":
        return _finding(
            run,
            MEMORY_EXCEEDED,
            f"The container must start within {run.memory_mb} MB of memory; the engine "
            "killed it for exceeding that (OOMKilled).",
            log,
        )
    if kind == "loopback":
        said = " (its HEALTHCHECK reports `healthy`)" if healthcheck == "healthy" else ""
        return _finding(
            run,
            PORT_UNREACHABLE,
            f"The server must listen on every address so `GET /health` answers through "
            f"the published port; it listens on {detail} port {run.port} only{said}, so "
            "the port mapping cannot reach it.",
            log,
        )
    listening = (
        f"it listens on {detail} port {run.port} but /health never returned 200"
        if detail
        else f"nothing listens on port {run.port} yet"
    )
    return _finding(
        run,
        COLD_START_SLOW,
        f"The container must answer `GET /health` within {run.timeout_s:g} s; {listening}.",
        log,
    )


def exited(run: HardenedRun, exit_code: str, log: str) -> Finding | None:
    """The finding for a container that exited before answering, when its log tells why
    (EK442, EK441, EK445); ``None``: no known sign, :func:`exited_unexplained` decides after
    one start without the hardening options."""
    if _has(log, EROFS_SIGNS):
        return _finding(
            run,
            WRITES_ROOTFS,
            "The server must write only under `/tmp` (the root filesystem is read-only); "
            f"it exited with code {exit_code} after `Read-only file system` (EROFS).",
            log,
        )
    if _has(log, EACCES_SIGNS):
        return _finding(
            run,
            NEEDS_ROOT,
            f"The image must run as an arbitrary non-root uid ({run.user}); it exited with "
            f"code {exit_code} after a permission error.",
            log,
        )
    if run.isolated and _has(log, NO_NETWORK_SIGNS):
        return _finding(
            run,
            NETWORK_NOT_HONOURED,
            "With `network.mode: no-network` the environment must start without the "
            f"network; under `--network none` it exited with code {exit_code} after a "
            "network error.",
            log,
        )
    return None


def exited_unexplained(run: HardenedRun, exit_code: str, log: str, starts_plain: bool) -> Finding:
    """EK441 when the image starts without the hardening options (``starts_plain``) though
    it exited hardened with no known sign in its log, else EK446."""
    if starts_plain:
        return _finding(
            run,
            NEEDS_ROOT,
            f"The image must run hardened (uid {run.user}, read-only, no capabilities); it "
            f"exited with code {exit_code} that way, but starts without those options.",
            log,
        )
    return _finding(
        run,
        CONTAINER_START_FAILED,
        f"The container must answer `GET /health`; it exited with code {exit_code} before "
        "that (also without the hardening options).",
        log,
    )


def interfaces(run: HardenedRun, names: Sequence[str] | None) -> list[Finding]:
    """EK445 when a ``no-network`` container has an interface besides loopback (``names``:
    the container's interfaces, ``None`` when they could not be read)."""
    if not run.isolated or names is None or not set(names) - {"lo"}:
        return []
    return [
        _finding(
            run,
            NETWORK_NOT_HONOURED,
            "With `network.mode: no-network` the container must have no network interface "
            f"but loopback; it has {', '.join(sorted(set(names)))}.",
        )
    ]


def after_play(run: HardenedRun, oom_killed: bool, log: str) -> list[Finding]:
    """What the container shows after the runtime stage (``oom_killed``: the engine's
    ``OOMKilled``; ``log``: its whole log): EK443, EK442, EK445."""
    found: list[Finding] = []
    if oom_killed:
        found.append(
            _finding(
                run,
                MEMORY_EXCEEDED,
                f"The container must stay within {run.memory_mb} MB; the engine killed it "
                "for exceeding that during the runtime stage (OOMKilled).",
                _tail(log),
            )
        )
    if _has(log, EROFS_SIGNS):
        found.append(
            _finding(
                run,
                WRITES_ROOTFS,
                "The server must write only under `/tmp`; during the runtime stage it failed "
                "with `Read-only file system` (EROFS).",
                _matching(log, EROFS_SIGNS),
            )
        )
    if run.isolated and _has(log, NO_NETWORK_SIGNS):
        found.append(
            _finding(
                run,
                NETWORK_NOT_HONOURED,
                "With `network.mode: no-network` the environment must not use the network; "
                "during the runtime stage it hit network errors.",
                _matching(log, NO_NETWORK_SIGNS),
            )
        )
    return found


LOG_TAIL = 30  # lines of the log a finding quotes


def _tail(log: str) -> str:
    return "\n".join(log.rstrip().splitlines()[-LOG_TAIL:])


def _has(text: str, signs: Sequence[str]) -> bool:
    low = text.lower()
    return any(s in low for s in signs)


def _matching(log: str, signs: Sequence[str], limit: int = 8) -> str:
    lines = [ln for ln in log.splitlines() if _has(ln, signs)]
    return "\n".join(lines[-limit:])


def _finding(run: HardenedRun, rule: Rule, message: str, log: str = "") -> Finding:
    """``message``, the log tail, then how to reproduce the run by hand."""
    text = message + (f" Log tail:\n{log.strip()}\n" if log.strip() else " ")
    text += f"Reproduce: `{run.command}` (or `envkit run --docker --hardened`)."
    return rule.finding(text, image=run.image, docker_run=list(run.flags), log_tail=log)
