"""One exception hierarchy and one exit-code enum for the whole of envkit.

Library functions raise these; only the CLI entry point catches them (``envkit.cli``), prints
the message and its next step, and exits with :class:`ExitCode`. ``ENVKIT_DEBUG=1`` makes the
CLI show the traceback as well.

Every message states what went wrong and ends with the next step the user can take.

The tree (exit code in brackets)::

    EnvkitError [2]
    ├── UserError [2]
    │   ├── UsageError [2]
    │   ├── SpecError [2]
    │   │   └── MigrationRefused [2]     envkit.migrate: a file cannot be parsed
    │   ├── TemplateError [2]
    │   ├── DestinationError [2]
    │   ├── ServerStartError [1]
    │   ├── WireError [2]
    │   ├── DockerUnavailableError [2]
    │   ├── BuildError [1]
    │   │   └── BuildTimeoutError [1]  envkit.container.build: past the deadline
    │   ├── ContainerError [1]
    │   ├── HubError [2]
    │   │   ├── HubAuthError [2]
    │   │   └── PushBlockedError [1]   envkit.hub: preflight found problems, nothing sent
    │   ├── ModelEndpointError [2]
    │   ├── PlanError [2]                envkit.probe_plan: validation/runtime.json
    │   ├── EvalAbortedError [2]         envkit.evaluation: --timeout, lost sessions, server exit
    │   └── PolicyError [2]              envkit.policy: a module:callable policy failed
    └── InternalError [2]
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from envkit.findings import Location


class ExitCode(IntEnum):
    """Process exit codes, the same for every command.

    ``OK`` (0): success. ``FINDINGS`` (1): the command ran and found problems in the user's
    environment (validate findings, a failing build step, a container that never became
    healthy). ``ERROR`` (2): usage, configuration or internal failure.
    """

    OK = 0
    FINDINGS = 1
    ERROR = 2


class EnvkitError(Exception):
    """Base of every error envkit raises on purpose.

    Args:
        message: one line saying what went wrong (expected vs actual, then the likely cause).
        hint: the next step, imperative ("Start it or set DOCKER_HOST."). Printed after the
            message.
        details: optional multi-line context (a log tail, the failing step's output).
    """

    exit_code: ExitCode = ExitCode.ERROR

    def __init__(self, message: str, *, hint: str | None = None, details: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.details = details

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.message if not self.hint else f"{self.message} {self.hint}"


class UserError(EnvkitError):
    """An expected failure caused by input or the machine; shown without a traceback."""


class UsageError(UserError):
    """Invalid arguments or option combinations (exit 2)."""

    @classmethod
    def cannot_listen(cls, host: str, port: int, exc: OSError) -> UsageError:
        """A server of envkit's own could not bind ``host:port`` (``exc``: the bind's error,
        e.g. ``EADDRINUSE`` or ``EADDRNOTAVAIL``)."""
        return cls(
            f"Cannot listen on {host}:{port}: {exc.strerror or exc}.",
            hint="Pick another port with --port, or stop what uses it.",
        )


class SpecError(UserError):
    """The environment's files (openenv.yaml, pyproject.toml, ...) cannot be used as they are."""


class TemplateError(UserError):
    """An unknown template or a template that cannot be rendered."""


class DestinationError(UserError):
    """The output directory cannot be written (not empty, not a directory, a path trick)."""


class ServerStartError(UserError):
    """The environment server did not start or never answered ``GET /health``.

    Exit 1: the command ran, and the user's environment is what failed.
    """

    exit_code = ExitCode.FINDINGS


class WireError(UserError):
    """A server did not answer as the OpenEnv contract says (docs/protocol.md)."""


class DockerUnavailableError(UserError):
    """No Docker engine answers at the configured host."""


class BuildError(UserError):
    """``docker build`` failed on the user's Dockerfile (exit 1)."""

    exit_code = ExitCode.FINDINGS


class ContainerError(UserError):
    """A container exited early or never became healthy (exit 1)."""

    exit_code = ExitCode.FINDINGS


class HubError(UserError):
    """The Hugging Face Hub refused a call; the message names the status and the next step."""


class HubAuthError(HubError):
    """No usable Hugging Face token, or the Hub rejected it."""


class ModelEndpointError(UserError):
    """An OpenAI-compatible model endpoint could not be used (unreachable, 401, 429, ...)."""


class InternalError(EnvkitError):
    """A bug in envkit. The CLI asks the user to report it."""


class MigrationRefused(SpecError):
    """A file ``envkit migrate`` must change cannot be parsed: nothing was written (exit 2).

    Raised by :func:`envkit.migrate.migrate`; the message names the file and, when the parser
    gives one, its ``line:column``.
    """


class PlanError(UserError):
    """A probe plan is missing or breaks OpenEnv's plan schema, or cannot be recorded.

    Raised by :mod:`envkit.probe_plan` (``validation/runtime.json``).

    Attributes:
        location: where in the plan file (JSON syntax errors), else ``None``.
    """

    def __init__(
        self,
        message: str,
        *,
        location: Location | None = None,
        hint: str | None = None,
        details: str | None = None,
    ):
        super().__init__(message, hint=hint, details=details)
        self.location = location


class PushBlockedError(HubError):
    """Preflight found problems in the environment (secrets, static validate errors): nothing
    was sent. Exit 1, like validate findings.

    Also importable from its former home, ``envkit.hub.errors``.
    """

    exit_code = ExitCode.FINDINGS


class BuildTimeoutError(BuildError):
    """``docker build`` ran past its deadline and was stopped (exit 1, as a failed build).

    Raised by :func:`envkit.container.build.build_image` when its ``deadline`` passes; the
    build's running step was killed and its intermediate container removed.
    """


class EvalAbortedError(UserError):
    """``envkit eval`` stopped before its end: the ``--timeout`` budget ran out, sessions kept
    getting lost, or the server exited. The message says which; finished episodes are written.

    Also importable from its former home, ``envkit.evaluation``.
    """


class PolicyError(UserError):
    """An environment's ``module:callable`` policy (its oracle, say) could not be loaded,
    raised, timed out, or returned something that is not a dict.

    Also importable from its former home, ``envkit.policy``.
    """
