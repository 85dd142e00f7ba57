"""Small test helpers shared across areas (no fixtures here), and the cross-run venv cache."""

from __future__ import annotations

import ast
import hashlib
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

# Captured at import, before the autouse `_isolate` fixture points HOME at a temp dir.
REAL_HOME = Path.home()
# A venv build on a loaded 2-core machine with a cold uv cache (PyPI downloads): seconds.
VENV_BUILD_TIMEOUT_S = 900
_COMPLETE = ".envkit-test-complete"


def shipped_templates() -> tuple[str, ...]:
    """Every template envkit ships (its catalog: ``templates/<name>/template.toml``), the
    default first: a test parametrized over it covers a new template without naming it."""
    from envkit.catalog import list_templates

    return tuple(t.name for t in list_templates())


#: envkit's own package (its sources, as the house tests read them).
ENVKIT_PACKAGE = Path(__file__).resolve().parents[1] / "envkit"


@cache
def envkit_sources() -> tuple[tuple[Path, str, ast.Module], ...]:
    """Every module of ``envkit/`` as ``(path, text, tree)``, sorted by path, parsed once per
    test process: several house tests walk them all (about 0.8 s a parse of the package).
    The trees are shared: walk them, never change them."""
    out = []
    for path in sorted(ENVKIT_PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        out.append((path, text, ast.parse(text)))
    return tuple(out)


#: A ``gradio`` that raises ModuleNotFoundError, put first on ``PYTHONPATH`` of the processes
#: the tests start (its ``__init__.py`` says why).
WITHOUT_GRADIO = Path(__file__).parent / "_without_gradio"


def path_without_gradio(pythonpath: str | None) -> str:
    """``pythonpath`` (a ``PYTHONPATH`` value, ``None`` when unset) with
    :data:`WITHOUT_GRADIO` first; unchanged when it is there already."""
    parts = (pythonpath or "").split(os.pathsep)
    if str(WITHOUT_GRADIO) in parts:
        return pythonpath or ""
    return os.pathsep.join(filter(None, [str(WITHOUT_GRADIO), *parts]))


def cache_root() -> Path:
    """Root of the test cache kept across runs: ``$ENVKIT_TEST_CACHE``, else
    ``~/.cache/envkit-tests`` of the real (not the isolated) home."""
    override = os.environ.get("ENVKIT_TEST_CACHE")
    return Path(override) if override else REAL_HOME / ".cache" / "envkit-tests"


def _uv() -> str:
    from envkit.envdir.uv import uv_binary

    uv = uv_binary()
    if not uv:
        raise RuntimeError("uv is required (a declared dependency of rl-envkit)")
    return uv


def cached_venv(requirements: str) -> Path:
    """A venv of the test interpreter's Python with ``requirements`` installed, built once and
    kept under ``<test cache>/venvs/<hash>`` across runs (and shared by xdist workers).

    Args:
        requirements: requirements.txt text (one requirement a line; ``#`` comments allowed).
            Its hash, with the Python version and base prefix, names the venv, so a changed
            dependency set (e.g. a re-resolved ``uv.lock``) builds a new one.

    Returns:
        The venv's root directory. Callers must treat it as read-only: a test that installs
        more packages layers a venv of its own on top (:func:`layered_venv`).

    Raises:
        subprocess.CalledProcessError: ``uv venv`` or ``uv pip install`` failed.
        filelock.Timeout: another process held the build lock for longer than
            ``VENV_BUILD_TIMEOUT_S`` seconds.
    """
    from filelock import FileLock

    ident = f"{sys.version}\n{sys.base_prefix}\n{requirements}"
    key = hashlib.sha256(ident.encode()).hexdigest()[:20]
    root = cache_root() / "venvs"
    root.mkdir(parents=True, exist_ok=True)
    venv = root / key
    if (venv / _COMPLETE).is_file():
        return venv
    # One builder per venv across xdist workers and concurrent runs; the others wait, then
    # find the marker. A build that died half-way has no marker and is redone.
    with FileLock(str(root / f"{key}.lock"), timeout=VENV_BUILD_TIMEOUT_S):
        if (venv / _COMPLETE).is_file():
            return venv
        shutil.rmtree(venv, ignore_errors=True)
        uv = _uv()
        subprocess.run(
            [uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True, timeout=120
        )
        (venv / "requirements.txt").write_text(requirements)
        subprocess.run(
            [
                uv,
                "pip",
                "install",
                "-q",
                "--python",
                str(venv / "bin" / "python"),
                "-r",
                str(venv / "requirements.txt"),
            ],
            check=True,
            timeout=VENV_BUILD_TIMEOUT_S,
        )
        (venv / _COMPLETE).write_text(requirements)
    return venv


def _site_packages(venv: Path) -> Path:
    return venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"


def layered_venv(path: Path, base: Path) -> str:
    """A fresh venv at ``path`` that sees ``base``'s packages through a ``.pth`` line (after
    its own site-packages, so what a test installs into it wins). Takes well under a second.

    Args:
        path: where to create the venv (must not exist).
        base: a venv from :func:`cached_venv`, never written to.

    Returns:
        The new venv's python executable (str).

    Raises:
        subprocess.CalledProcessError: ``uv venv`` failed.
    """
    subprocess.run(
        [_uv(), "venv", "-q", "--python", sys.executable, str(path)], check=True, timeout=120
    )
    (_site_packages(path) / "_envkit_test_base.pth").write_text(f"{_site_packages(base)}\n")
    return str(path / "bin" / "python")


def locked_env_venv(env: Path, extra_requirements: str = "") -> str:
    """The venv of a locked environment at ``env``: its locked dependencies and pytest (plus
    ``extra_requirements``, requirements.txt text) from a venv cached across runs by the hash
    of that set (:func:`cached_venv`), and the environment itself installed editable,
    ``--no-deps``, into ``env/.venv`` layered on top. Returns that venv's interpreter."""
    uv = _uv()
    # The lock's dependency set without the project (installed editable below).
    deps = subprocess.run(
        [
            uv,
            "export",
            "-q",
            "--frozen",
            "--no-emit-project",
            "--no-hashes",
            "--no-header",
            "--format",
            "requirements-txt",
        ],
        cwd=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    base = cached_venv(deps + "pytest\n" + extra_requirements)
    python = layered_venv(env / ".venv", base)
    subprocess.run(
        [uv, "pip", "install", "-q", "--no-deps", "--python", python, "-e", str(env)],
        check=True,
        timeout=600,
    )
    return python


def docker_available() -> tuple[bool, str]:
    """(True, "") when a Docker engine answers, else (False, cause)."""
    try:
        import docker

        client = docker.from_env(timeout=10)
        client.ping()
        client.close()
        return True, ""
    except Exception as exc:  # noqa: BLE001
        return False, f"{type(exc).__name__}: {exc}"


def descendants(pid: int) -> set[int]:
    """PIDs of every live descendant of ``pid`` (from /proc). This process's reaper
    (:func:`envkit.reaper.owner_token`), a descendant for as long as the process lives, is
    started first, so that it is in a "before" and never counts as left behind."""
    from envkit.reaper import owner_token

    owner_token()
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    out: set[int] = set()
    stack = [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in out:
                out.add(child)
                stack.append(child)
    return out


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except OSError:
        return False


def pids_with_cmdline(fragment: str) -> set[int]:
    """PIDs whose command line contains ``fragment``."""
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if fragment in cmd:
                out.add(int(entry.name))
    return out


@contextmanager
def serve_in_thread(app: Any, name: str, **config: Any) -> Iterator[str]:
    """Serve the ASGI ``app`` with a real uvicorn on 127.0.0.1 in a daemon thread named
    ``name``; yields its base URL (``http://127.0.0.1:PORT``) once uvicorn has started, and
    stops it at the end. The socket is bound here before uvicorn starts (envkit's
    ``listen_socket``), so no other process can take the port in between. ``config``: more
    ``uvicorn.Config`` options (``log_level`` defaults to ``warning``).

    Raises:
        RuntimeError: uvicorn did not start within 20 s.
    """
    import uvicorn

    from envkit.server import listen_socket

    sock = listen_socket("127.0.0.1", 0)
    port = int(sock.getsockname()[1])
    config.setdefault("log_level", "warning")
    server = uvicorn.Server(uvicorn.Config(app, **config))
    server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name=name, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError(f"{name}: uvicorn did not start")
            time.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
