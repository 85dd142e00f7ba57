"""Run untrusted Python source against test inputs: the best isolation the standard library
offers on Linux, and never a hung or crashed server.

The submission runs in a child `python -I -S` (isolated mode: no environment variables, no
site-packages, no current directory on sys.path) in a fresh temporary directory, under
`resource` limits (CPU seconds, address space, file size, open files, processes) set by the
child itself before any submitted code runs, with a wall-clock timeout enforced by the
parent. An audit hook (PEP 578) in the child ends it at once on process creation, sockets,
native code loading, or any file access outside its directory and the standard library (the
hidden tests live elsewhere). Expected outputs never enter the child: it receives only the
inputs and the parent compares. Limits of this approach: it is not a container; for hostile
code at scale, run the environment itself in one (its Dockerfile does).
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Any, List, Sequence

CPU_SECONDS = 2  # per submission, all tests together
WALL_SECONDS = 4.0
MEMORY_BYTES = 256 * 1024 * 1024
OUTPUT_BYTES = 1024 * 1024  # stdout + stderr of the submission, each
RESULT_BYTES = 1024 * 1024

# Exit codes the child uses for violations (the audit hook calls os._exit: cannot be caught).
_VIOLATIONS = {
    81: "tried to start a process (fork/exec/subprocess), which is not allowed",
    82: "tried to use the network, which is not allowed",
    83: "tried to access files outside its sandbox (such as the hidden tests)",
    84: "tried to load native code (ctypes), which is not allowed",
}

_DRIVER = r"""
import json, os, resource, sys
tmp, func_name = sys.argv[1], sys.argv[2]
cpu, mem, out_bytes = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
resource.setrlimit(resource.RLIMIT_FSIZE, (out_bytes, out_bytes))
resource.setrlimit(resource.RLIMIT_NOFILE, (32, 32))
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
try:
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))  # enforced for non-root users only
except (ValueError, OSError):
    pass
with open(os.path.join(tmp, "inputs.json"), encoding="utf-8") as fh:
    calls = json.load(fh)
with open(os.path.join(tmp, "solution.py"), encoding="utf-8") as fh:
    source = fh.read()
result_file = open(os.path.join(tmp, "result.json"), "w", encoding="utf-8")
roots = tuple(os.path.abspath(p) + os.sep for p in sys.path if p) + (tmp + os.sep,)
devices = ("/dev/null", "/dev/urandom")
_exit, _abspath, _fspath = os._exit, os.path.abspath, os.fspath
PROCESS = {"os.fork", "os.forkpty", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
           "subprocess.Popen", "os.startfile", "pty.spawn"}
FILES = {"open", "os.listdir", "os.scandir", "os.chdir", "os.symlink", "os.link",
         "os.rename", "os.remove", "os.rmdir", "os.mkdir", "shutil.copyfile"}

def hook(event, args):
    if event in PROCESS:
        _exit(81)
    if event.startswith("socket."):
        _exit(82)
    if event.startswith("ctypes.") or event == "cpython._PySys_ClearAuditHooks":
        _exit(84)
    if event in FILES and args and not isinstance(args[0], int):
        path = _abspath(_fspath(args[0]) if not isinstance(args[0], bytes) else args[0].decode())
        if path not in devices and not (path + os.sep).startswith(roots):
            _exit(83)

sys.addaudithook(hook)
results = {"outputs": [], "error": ""}
namespace = {"__name__": "solution", "__builtins__": __builtins__}
try:
    exec(compile(source, "solution.py", "exec"), namespace)
    func = namespace.get(func_name)
    if not callable(func):
        results["error"] = f"no function `{func_name}` defined"
except MemoryError:
    results["error"], func = "memory limit exceeded", None
except BaseException as exc:
    results["error"], func = f"{type(exc).__name__}: {exc}"[:300], None
for args in calls if results["error"] == "" else []:
    try:
        value = func(*args)
        json.dumps(value)
        results["outputs"].append({"ok": True, "value": value})
    except MemoryError:
        results["error"] = "memory limit exceeded"
        break
    except BaseException as exc:
        results["outputs"].append({"ok": False, "value": f"{type(exc).__name__}: {exc}"[:200]})
json.dump(results, result_file)
result_file.close()
"""


@dataclass
class Verdict:
    """Outcome of one submission.

    Attributes:
        passed: tests whose output equalled the expected one.
        total: number of tests.
        message: one line for the agent (why it scored what it scored).
    """

    passed: int
    total: int
    message: str

    @property
    def fraction(self) -> float:
        """passed / total, in [0, 1]."""
        return self.passed / self.total if self.total else 0.0


def run_tests(source: str, func_name: str, tests: Sequence[Any]) -> Verdict:
    """Run `func_name(*args)` from `source` for every `(args, expected)` in `tests`.

    Never raises for anything the submission does: infinite loops, memory bombs, fork
    attempts, huge output, crashes and attempts to read the tests all come back as a
    Verdict with 0 passed and a message.
    """
    total = len(tests)
    tmp = tempfile.mkdtemp(prefix="envkit-code-")
    try:
        with open(os.path.join(tmp, "solution.py"), "w", encoding="utf-8") as fh:
            fh.write(source)
        with open(os.path.join(tmp, "inputs.json"), "w", encoding="utf-8") as fh:
            json.dump([list(args) for args, _expected in tests], fh)
        out_path, err_path = os.path.join(tmp, "stdout.txt"), os.path.join(tmp, "stderr.txt")
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _DRIVER, tmp, func_name, str(CPU_SECONDS),
                 str(MEMORY_BYTES), str(OUTPUT_BYTES)],
                cwd=tmp, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                env={"PATH": os.defpath, "LANG": "C.UTF-8"}, start_new_session=True,
            )
            try:
                code = proc.wait(timeout=WALL_SECONDS)
            except subprocess.TimeoutExpired:
                _kill(proc)
                return Verdict(0, total, f"Time limit exceeded ({WALL_SECONDS:g} s): reward 0.")
            finally:
                _kill(proc)
        if max(os.path.getsize(out_path), os.path.getsize(err_path)) >= OUTPUT_BYTES:
            return Verdict(0, total, f"Output limit exceeded ({OUTPUT_BYTES // 1024} KB): reward 0.")
        if code in _VIOLATIONS:
            return Verdict(0, total, f"The submission {_VIOLATIONS[code]}: reward 0.")
        if code in (-signal.SIGXCPU, -signal.SIGKILL):
            return Verdict(0, total, f"Time limit exceeded ({CPU_SECONDS} s CPU): reward 0.")
        result = _read_result(os.path.join(tmp, "result.json"))
        if result is None:
            tail = _tail(err_path)
            why = "memory limit exceeded" if "MemoryError" in tail else f"crashed (exit {code})"
            return Verdict(0, total, f"The submission {why}: reward 0. {tail}".strip())
        if result.get("error"):
            return Verdict(0, total, f"The submission failed: {result['error']}: reward 0.")
        outputs = result.get("outputs", [])
        passed = sum(1 for out, (_args, expected) in zip(outputs, tests)
                     if isinstance(out, dict) and out.get("ok") and out.get("value") == expected)
        return Verdict(passed, total, f"{passed}/{total} hidden tests passed.")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _read_result(path: str) -> Any:
    try:
        if os.path.getsize(path) > RESULT_BYTES:
            return None
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else None
    except (OSError, ValueError):
        return None


def _tail(path: str, limit: int = 200) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(max(os.path.getsize(path) - limit, 0))
            return fh.read().decode("utf-8", "replace").strip().splitlines()[-1][:limit]
    except (OSError, IndexError):
        return ""
