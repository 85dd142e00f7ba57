"""EK440-EK449: the container lane (``envkit validate --docker``).

The lane runs the environment's image the way OpenEnv 0.10's validator and careful hosts do
(read-only root filesystem, uid 65532, every capability dropped, ``no-new-privileges``, a pids
limit, the declared memory and CPU, ``/tmp`` the only writable place, the port published on
127.0.0.1) and reports what only the image shows. Every message carries the exact
``docker run`` flags used, so the finding can be reproduced by hand with
``envkit run --docker --hardened``.
"""

from __future__ import annotations

from envkit.envdir.constants import DEFAULT_APP
from envkit.findings import Severity, register

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
