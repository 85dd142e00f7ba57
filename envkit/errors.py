"""One exception hierarchy and one exit-code enum for the whole of envkit.

Library functions raise these; only the CLI entry point catches them (``envkit.cli``), prints
the message and its next step, and exits with :class:`ExitCode`. ``ENVKIT_DEBUG=1`` makes the
CLI show the traceback as well.

Every message states what went wrong and ends with the next step the user can take.

Error tree (exit code in brackets; ``FINDINGS`` is 1, everything else 2)::

    EnvkitError
    ├── UserError
    │   ├── UsageError
    │   ├── SpecError
    │   ├── TemplateError
    │   ├── DestinationError
    │   ├── ServerStartError [1]
    │   ├── WireError
    │   ├── DockerUnavailableError
    │   ├── BuildError [1]
    │   ├── ContainerError [1]
    │   ├── HubError
    │   │   └── HubAuthError
    │   ├── ModelEndpointError
    │   ├── EvalAbortedError
    │   └── PolicyError
    └── InternalError
"""

from __future__ import annotations

from enum import IntEnum


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


class EvalAbortedError(UserError):
    """``envkit eval`` stopped before its end: the ``--timeout`` budget ran out, sessions kept
    getting lost, or the server exited. The message says which; finished episodes are written.

    Also importable from ``envkit.evaluation`` (its home before the errors were gathered here).
    """


class PolicyError(UserError):
    """An environment's ``module:callable`` policy (its oracle, say) could not be loaded,
    raised, timed out, or returned something that is not a dict.

    Also importable from ``envkit.policy`` (its home before the errors were gathered here).
    """
