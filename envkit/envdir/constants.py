"""Facts about an OpenEnv environment directory that envkit relies on, declared once.

Every module that needs one of these names imports it from here; a test
(``tests/envdir/test_constants.py``) fails when the default app, the manifest name or the
OpenEnv pin is written out as a literal anywhere else in ``envkit/``.

Sources: OpenEnv 0.10 (``openenv init`` writes ``openenv.yaml`` with ``app:
server.app:app`` and ``port: 8000``; RFC 008, huggingface/OpenEnv#1041, owns the
``validation:`` block and its ``execution.probe_path``), uvicorn's ``module:attribute``
import strings (``uvicorn.importer.import_from_string``: the attribute may be dotted).
"""

from __future__ import annotations

import re
from typing import Final

MANIFEST_NAME: Final = "openenv.yaml"
"""The manifest file at the root of an environment directory."""

DEFAULT_APP: Final = "server.app:app"
"""The ASGI app OpenEnv serves when the manifest names none (what ``openenv init`` writes)."""

DEFAULT_PORT: Final = 8000
"""The port of ``openenv.yaml`` when it declares none, and of Docker Spaces' ``app_port``."""

APP_PATTERN: Final = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
"""A ``module.path:attribute`` import string (use with ``fullmatch``). Both sides are dotted
identifiers: uvicorn resolves ``pkg.mod:obj.attr`` by attribute access."""

PROBE_PLAN_PATH: Final = "validation/runtime.json"
"""RFC 008's default ``execution.probe_path``: the runtime probe plan ``openenv validate``
plays (relative to the environment directory)."""

DOCKERFILE_NAME: Final = "Dockerfile"
"""The Dockerfile Spaces build: the one at the root of the repository."""

OPENENV_DISTRIBUTION: Final = "openenv"
"""The distribution of OpenEnv's runtime from 0.10 on."""

OPENENV_LEGACY_DISTRIBUTION: Final = "openenv-core"
"""The distribution OpenEnv's runtime had up to 0.3.0; it installs the same packages as
``openenv``, so the two must never share a venv."""

OPENENV_REQUIREMENT: Final = "openenv>=0.10,<0.11"
"""The requirement generated and migrated environments declare."""

ENVKIT_KEYS: Final = ("oracle", "max_steps", "seeds", "step_timeout_s", "startup_timeout_s")
"""Keys of envkit's own top-level ``envkit:`` section of the manifest."""

LEGACY_KEYS: Final = (
    "reward_range",
    "max_steps",
    "oracle",
    "seeds",
    "floor_margin",
    "step_timeout_s",
    "startup_timeout_s",
)
"""envkit's keys directly under ``validation:`` before OpenEnv 0.10 (deprecated: OpenEnv
owns that block now)."""

DEBRIS_DIRS: Final = frozenset(
    {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".venv", ".git"}
)
"""Folders that are build or tool debris, never part of a template, skill or environment."""

DEBRIS_FILES: Final = frozenset({".DS_Store", "Thumbs.db"})
"""Files that operating systems leave behind."""

DEBRIS_SUFFIXES: Final = (".pyc", ".pyo")
"""Suffixes of compiled Python files."""

DEFAULT_STARTUP_TIMEOUT_S: Final = 60.0
"""Seconds a server gets to answer ``GET /health`` when the manifest declares no
``startup_timeout_s`` (an environment that loads a model may declare more)."""

DEFAULT_BLIND_FLOOR: Final = (0.05, 0.5)
"""``envkit.blind_floor``'s default: a question-blind policy earning more than 5 % of the
oracle's return is a warning, more than half of it an error (EK524)."""

VALIDATE_MAX_STEPS: Final = 50
"""Steps after which ``envkit validate`` ends a fuzzed episode that declared no
``max_steps``: long enough to see a real episode end, short enough for a 2-core CI run."""

EVAL_MAX_STEPS: Final = 32
"""Steps after which ``envkit eval`` ends an episode that declared no ``max_steps``: each
step of a model policy is a paid model call, so eval stops sooner than validate."""


def is_debris(name: str) -> bool:
    """Whether a file or folder name is debris (:data:`DEBRIS_DIRS`, :data:`DEBRIS_FILES`,
    :data:`DEBRIS_SUFFIXES`)."""
    return name in DEBRIS_DIRS or name in DEBRIS_FILES or name.endswith(DEBRIS_SUFFIXES)
