"""Run an environment's own policy (its oracle, or any ``module:callable``) out of process.

A policy maps an observation dict (as sent on the wire) to an action dict. It is the
environment's code, so it runs in the environment's interpreter, with the environment
directory first on ``sys.path`` -- envkit never imports environment code into its own
process. Protocol (:mod:`envkit.programs.policy_host`): one JSON line in
(``{"observation": {...}}``), one JSON line out (``{"action": {...}}`` or
``{"error": "..."}``).
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
from pathlib import Path
from typing import Any

from envkit import programs
from envkit.envdir.project import no_answer

# PolicyError lives in envkit.errors; importing it here keeps ``from envkit.policy import
# PolicyError`` working for callers written before the move.
from envkit.errors import InternalError, PolicyError
from envkit.server import bytecode_env, kill_marked, marked_env, new_run_id


class PolicyTimeout(PolicyError):
    """The child said nothing within the time allowed (a load or a call that ran out); the
    message names the timeout and how to raise it (:func:`envkit.envdir.project.no_answer`)."""


class PolicyProcess:
    """A ``module:callable`` policy served by a child process.

    Args:
        spec: ``"server.oracle:policy"``.
        root: environment directory (put first on the child's ``sys.path``).
        python: the environment's interpreter.
        timeout_s: seconds allowed for each call (and for loading, unless ``load_timeout_s``).
        load_timeout_s: seconds allowed to import the module and find the callable; a load
            past it raises a :class:`PolicyError` that names the start-up timeout.
        defer_load: start the child and return at once; the load is awaited (and its
            :class:`PolicyError` raised) by :meth:`wait_loaded` or the first call. Lets a
            caller overlap the import (seconds: openenv alone) with other start-up work.

    Raises:
        PolicyError: the module or callable cannot be loaded (message has the cause);
            with ``defer_load``, from :meth:`wait_loaded` or the first call instead.
    """

    def __init__(
        self,
        spec: str,
        root: Path,
        python: str,
        *,
        timeout_s: float = 30.0,
        load_timeout_s: float | None = None,
        defer_load: bool = False,
    ):
        self.spec = spec
        self.timeout_s = timeout_s
        self._load_timeout_s = load_timeout_s
        self._loaded = False
        # Marked like a server (envkit.server): close() kills whatever it started, detached
        # or not.
        self.run_id = new_run_id()
        env = marked_env(self.run_id, {"PYTHONUNBUFFERED": "1"})
        env.update(bytecode_env(env))
        self._proc = subprocess.Popen(
            [python, "-c", programs.source("policy_host"), str(root), spec],
            cwd=root,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        if not defer_load:
            self.wait_loaded()

    def wait_loaded(self) -> None:
        """Wait until the child has imported the policy (at most ``load_timeout_s`` from
        now). Idempotent.

        Raises:
            PolicyError: the module or callable cannot be loaded, or the load ran out.
        """
        if self._loaded:
            return
        first = self._read_load(self._load_timeout_s)
        if "error" in first:
            self.close()
            raise PolicyError(
                f"Policy `{self.spec}`: {first['error']}.",
                hint="Check `envkit.oracle` in openenv.yaml points at a "
                "callable taking the observation dict.",
            )
        self._loaded = True

    def _read_load(self, load_timeout_s: float | None) -> dict[str, Any]:
        """The child's first line (loaded, or the load error) within ``load_timeout_s``."""
        if load_timeout_s is None:
            return self._read()
        try:
            return self._read(load_timeout_s)
        except PolicyTimeout:
            module = self.spec.partition(":")[0]
            raise PolicyError(
                f"Policy `{self.spec}` did not load within {load_timeout_s:g} s "
                f"(the start-up timeout): importing `{module}` took longer than that.",
                hint=f"Keep `{module.replace('.', '/')}.py` free of heavy imports (importing "
                "openenv alone takes seconds on a busy machine), or raise --startup-timeout "
                "(or `envkit.startup_timeout_s` in the manifest).",
            ) from None

    def _read(self, timeout_s: float | None = None) -> dict[str, Any]:
        stdout = self._proc.stdout
        if stdout is None:  # Popen was given stdout=PIPE, so this is a bug
            raise InternalError(f"Policy `{self.spec}`: the child process has no stdout pipe.")
        sel = selectors.DefaultSelector()
        sel.register(stdout, selectors.EVENT_READ)
        wait_s = self.timeout_s if timeout_s is None else timeout_s
        ready = sel.select(wait_s)
        sel.close()
        if not ready:
            self.close()
            raise PolicyTimeout(no_answer(f"Policy `{self.spec}`", wait_s, policy=True))
        line = stdout.readline()
        if not line:
            self.close()
            raise PolicyError(f"Policy `{self.spec}` exited (code {self._proc.poll()}).")
        try:
            return dict(json.loads(line))
        except (ValueError, TypeError):
            raise PolicyError(
                f"Policy `{self.spec}` wrote a line that is not JSON: {line[:200]!r}."
            ) from None

    def alive(self) -> bool:
        """True while the child process runs (a policy that crashed hard is not alive)."""
        return self._proc.poll() is None

    def __call__(self, observation: dict[str, Any]) -> dict[str, Any]:
        """The action for ``observation``.

        Raises:
            PolicyError: the policy raised, timed out or returned a non-dict.
        """
        self.wait_loaded()
        stdin = self._proc.stdin
        if stdin is None:  # Popen was given stdin=PIPE, so this is a bug
            raise InternalError(f"Policy `{self.spec}`: the child process has no stdin pipe.")
        try:
            stdin.write(json.dumps({"observation": observation}) + "\n")
            stdin.flush()
        except (BrokenPipeError, OSError):
            raise PolicyError(f"Policy `{self.spec}` is not running.") from None
        answer = self._read()
        if "error" in answer:
            raise PolicyError(f"Policy `{self.spec}` failed: {answer['error']}.")
        return dict(answer["action"])

    def close(self) -> None:
        """Stop the child and anything it started, however detached. Idempotent."""
        if self._proc.poll() is None:
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        kill_marked(self.run_id)
        for stream in (self._proc.stdin, self._proc.stdout):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover
            pass

    def __enter__(self) -> PolicyProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
