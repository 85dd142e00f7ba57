"""EK2xx concurrency rules (envkit.validation.rules.concurrency): what counts as state
concurrent sessions share."""

from __future__ import annotations

from pathlib import Path

from envkit.validation import validate
from tests.validation.test_static_rules import append, edit


def test_class_level_state_mutated_through_self(clean_env: Path) -> None:
    edit(
        "server/echo_env_environment.py",
        "    SUPPORTS_CONCURRENT_SESSIONS = True\n",
        "    SUPPORTS_CONCURRENT_SESSIONS = True\n    _history = []\n",
    )(clean_env)
    edit(
        "server/echo_env_environment.py",
        "        self._state.step_count += 1\n",
        "        self._state.step_count += 1\n        self._history.append(action)\n",
    )(clean_env)
    report = validate(clean_env, static=True)
    assert [f.code for f in report.findings] == ["EK212"]
    assert "class-level container `_history`" in report.findings[0].message


DO_ONCE = """

_CACHE = None
_READY = False
_CALLS = 0


def _load():
    global _CACHE
    if _CACHE is not None:
        return _CACHE
    _CACHE = object()
    return _CACHE


def _prepare():
    global _READY
    if _READY:
        return
    _READY = True


_TOKENIZERS = {}


def _tokenizer(name):
    if name not in _TOKENIZERS:
        _TOKENIZERS[name] = name.upper()
    return _TOKENIZERS[name]
"""


def test_do_once_globals_are_not_shared_episode_state(clean_env: Path) -> None:
    """Issue #13 item 3 (textarena_env): a global set once per process behind an early
    return, and a dict memo keyed by its input, are caches, not episode state; a counter
    behind a limit still is."""
    append("server/echo_env_environment.py", DO_ONCE)(clean_env)
    report = validate(clean_env, static=True)
    assert [f.code for f in report.findings] == []
    append(
        "server/echo_env_environment.py",
        "\n\ndef _count():\n    global _CALLS\n    if _CALLS > 100:\n        return\n"
        "    _CALLS += 1\n",
    )(clean_env)
    report = validate(clean_env, static=True)
    assert [f.code for f in report.findings] == ["EK212"]
    assert "`_CALLS`" in report.findings[0].message
