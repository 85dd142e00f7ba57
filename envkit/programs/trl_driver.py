"""The training-path lane's driver (run as ``python -c``), see
:mod:`envkit.validation.train_path`.

Runs in the ENVIRONMENT's interpreter, which may not have envkit: standard library and what the
environment installs only.
"""

import asyncio
import importlib
import importlib.machinery
import importlib.util
import inspect
import json
import math
import os
import sys
import traceback

root, package, adapter, oracle_spec, seed, max_steps, tests = sys.argv[1:8]
seed, max_steps = int(seed), int(max_steps)
sys.path.insert(0, root)
out = sys.stdout
sys.stdout = sys.stderr  # the environment's prints must not corrupt the protocol
VENDOR = (os.sep + "site-packages" + os.sep, os.sep + ".venv" + os.sep)


def emit(**item):
    out.write(json.dumps(item, default=repr) + "\n")
    out.flush()


def inside(path):
    path = os.path.abspath(path or "")
    rest = path[len(root) :]
    return path.startswith(root + os.sep) and not any(v in rest for v in VENDOR)


def where(exc, default=None):
    """(file, line, text) of the last traceback frame inside the environment."""
    if isinstance(exc, SyntaxError) and inside(exc.filename):
        return exc.filename, exc.lineno, (exc.text or "").strip()
    found = (default, None, "")
    for frame in traceback.extract_tb(exc.__traceback__):
        if inside(frame.filename):
            found = (frame.filename, frame.lineno, (frame.line or "").strip())
    return found


def defined(func):
    """(file, line, text) of a function's `def`."""
    try:
        lines, start = inspect.getsourcelines(func)
        return inspect.getsourcefile(func), start, lines[0].strip()
    except (OSError, TypeError):
        return None, None, ""


def fail(phase, exc, default=None, at=None, **extra):
    file, line, text = at or where(exc, default)
    missing = exc.name if isinstance(exc, ModuleNotFoundError) else None
    emit(
        event="fail",
        phase=phase,
        error=f"{type(exc).__name__}: {exc}".strip(),
        file=file,
        line=line,
        text=text,
        missing=missing,
        **extra,
    )


def load_package():
    """The environment directory as the package `package`, whether installed or not."""
    init = os.path.join(root, "__init__.py")
    if os.path.isfile(init):
        spec = importlib.util.spec_from_file_location(
            package, init, submodule_search_locations=[root]
        )
    else:
        spec = importlib.machinery.ModuleSpec(package, None, is_package=True)
        spec.submodule_search_locations = [root]
    module = importlib.util.module_from_spec(spec)
    sys.modules[package] = module
    try:
        if spec.loader is not None:
            spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[package]
        raise


def adapter_class(module):
    classes = [
        c
        for c in vars(module).values()
        if inspect.isclass(c)
        and c.__module__ == module.__name__
        and callable(getattr(c, "reset", None))
    ]
    if not classes:
        raise LookupError(
            f"{adapter}.py defines no class with a `reset` method (TRL's "
            "environment_factory needs one)"
        )
    named = [c for c in classes if c.__name__.endswith("TRLEnv")]
    return (named or classes)[0]


class Captured(BaseException):  # not an Exception: a tool's `except Exception` lets it through
    def __init__(self, action):
        self.action = action


class Recorder:
    """Wraps the adapter's session client: records observations and the wire's rewards, and
    intercepts `step` while a candidate tool call is tried."""

    def __init__(self, env):
        self.env, self.capture, self.wire, self.result = env, False, [], None

    def client(self):
        for value in list(vars(self.env).values()):
            if (
                value is not self.env
                and callable(getattr(value, "step", None))
                and callable(getattr(value, "reset", None))
            ):
                if not getattr(value, "_envkit_recorded", False):
                    self.wrap(value)
                return value
        return None

    def wrap(self, client):
        reset, step, recorder = client.reset, client.step, self

        def recorded_reset(*args, **kwargs):
            recorder.result = reset(*args, **kwargs)
            return recorder.result

        def recorded_step(action, *args, **kwargs):
            if recorder.capture:
                raise Captured(action)
            recorder.result = step(action, *args, **kwargs)
            return recorder.result

        client.reset, client.step, client._envkit_recorded = recorded_reset, recorded_step, True
        inner = getattr(client, "_async", client)
        send = getattr(inner, "_send_and_receive", None)
        if inspect.iscoroutinefunction(send):

            async def recorded_send(message, *args, **kwargs):
                response = await send(message, *args, **kwargs)
                if isinstance(message, dict) and message.get("type") == "step":
                    recorder.wire.append((response.get("data") or {}).get("reward"))
                return response

            inner._send_and_receive = recorded_send

    def observation(self):
        obs = getattr(self.result, "observation", None)
        if hasattr(obs, "model_dump"):
            return obs.model_dump(exclude={"reward", "done", "metadata"})
        return dict(obs or {})


def dump(action):
    if hasattr(action, "model_dump"):
        return action.model_dump(exclude={"metadata"})
    return dict(action)


def same(captured, fields):
    try:
        wanted = (
            type(captured).model_validate(fields) if hasattr(captured, "model_dump") else fields
        )
        return dump(captured) == dump(wanted)
    except Exception:
        return False


def invoke(tool, kwargs):
    result = tool(**kwargs)
    return asyncio.run(result) if inspect.isawaitable(result) else result


def candidates(env, tools, fields):
    """(tool name, kwargs) calls that may build the action `fields`."""
    name, args = fields.get("tool_name"), fields.get("arguments")
    if name in tools and isinstance(args, dict):
        yield name, args
    for name in tools:
        params = [
            p
            for p in inspect.signature(getattr(env, name)).parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        names = [p.name for p in params]
        if names and set(names) <= set(fields):
            yield name, {n: fields[n] for n in names}
        required = [p.name for p in params if p.default is p.empty]
        if len(required) == len(fields) and set(required) != set(fields):
            yield name, dict(zip(required, fields.values()))


def match(env, tools, rec, fields):
    """The tool call that builds exactly `fields` (tried with `step` intercepted), or the
    error the first candidate raised, or (None, None)."""
    first_error = None
    for name, kwargs in candidates(env, tools, fields):
        rec.client()
        rec.capture = True
        try:
            invoke(getattr(env, name), kwargs)
        except Captured as got:
            if same(got.action, fields):
                return (name, kwargs), None
        except BaseException as exc:
            first_error = first_error or (name, exc)
        finally:
            rec.capture = False
    return None, first_error


def play(env, cls, tools, rec):
    policy = None
    if oracle_spec:
        try:
            module, _, attr = oracle_spec.partition(":")
            policy = importlib.import_module(module)
            for part in attr.split("."):
                policy = getattr(policy, part)
        except BaseException as exc:
            emit(
                event="note",
                text=f"the oracle `{oracle_spec}` did not load ({exc}); the tools were not played",
            )
            return
    else:
        emit(
            event="note", text="no oracle is declared (`envkit.oracle`): the tools were not played"
        )
        return
    if rec.client() is None:  # without it a candidate call cannot be tried safely
        emit(
            event="note",
            text="the adapter holds no session client (an attribute with "
            "`reset` and `step`): the oracle's episode was not played through the adapter",
        )
        return
    steps = 0
    for _ in range(max_steps):
        if rec.result is None or getattr(rec.result, "done", False):
            break
        fields = {k: v for k, v in dump(policy(rec.observation())).items() if k != "metadata"}
        call, error = match(env, tools, rec, fields)
        if call is None:
            if error is not None:
                fail("play", error[1], default=adapter_file, tool=error[0], action=fields)
            else:
                emit(
                    event="note",
                    text=f"no tool call of the adapter builds the oracle's "
                    f"action {json.dumps(fields, default=repr)[:200]}: the oracle's episode "
                    "was not played through the adapter",
                )
            return
        emit(at="play", tool=call[0], step=steps)
        try:
            invoke(getattr(env, call[0]), call[1])
        except BaseException as exc:
            fail("play", exc, default=adapter_file, tool=call[0], action=fields)
            return
        steps += 1
    emit(event="played", steps=steps)
    if steps and callable(getattr(env, "get_reward", None)):
        emit(at="reward")
        got = env.get_reward()
        wire = rec.wire[-1] if rec.wire else getattr(rec.result, "reward", None)
        wire = 0.0 if wire is None else wire
        file, line, text = defined(cls.get_reward)
        ok = isinstance(got, (int, float)) and math.isclose(got, wire, abs_tol=1e-9)
        emit(event="reward", ok=ok, adapter=got, wire=wire, file=file, line=line, text=text)


def live(cls):
    emit(at="build")
    try:
        env = cls()  # TRL: factory() with no arguments
    except BaseException as exc:
        fail("build", exc, default=adapter_file)
        return
    tools = [
        n
        for n, _ in inspect.getmembers(type(env), predicate=inspect.isfunction)
        if n not in ("reset", "get_reward") and not n.startswith("_")
    ]
    emit(event="tools", tools=tools, get_reward=callable(getattr(env, "get_reward", None)))
    try:
        from transformers.utils import get_json_schema
    except BaseException as exc:
        emit(event="schemas", checked=False, why=f"{type(exc).__name__}: {exc}")
    else:
        emit(event="schemas", checked=True)
        for name in tools:
            try:
                get_json_schema(getattr(env, name))
            except BaseException as exc:
                fail("schema", exc, tool=name, at=defined(getattr(type(env), name)))
    rec = Recorder(env)
    rec.client()
    emit(at="reset")
    try:
        text = env.reset(prompt=[{"role": "user", "content": "Play."}], seed=seed)
    except BaseException as exc:
        fail("reset", exc, default=adapter_file)
        return
    file, line, code = defined(type(env).reset)
    emit(
        event="reset", text=text if isinstance(text, str) else None, file=file, line=line, code=code
    )
    rec.client()  # reset may have opened a new session
    play(env, type(env), tools, rec)
    if hasattr(env, "__exit__"):
        env.__exit__(None, None, None)


def collect():
    """`pytest --collect-only` of `tests/` in this process: the environment's modules (and
    openenv, seconds to import) are loaded once for the adapter and the tests."""
    emit(at="collect")
    try:
        import pytest
    except BaseException as exc:
        emit(event="collect", installed=False, why=f"{type(exc).__name__}: {exc}")
        return
    failed = []

    class Reports:
        def pytest_collectreport(self, report):
            if report.failed:
                failed.append({"nodeid": report.nodeid, "text": report.longreprtext})

    args = [
        "--collect-only",
        "-q",
        "--tb=short",
        "--capture=no",
        "-p",
        "no:cacheprovider",
        os.path.join(root, tests),
    ]
    code = pytest.main(args, plugins=[Reports()])
    emit(event="collect", installed=True, code=int(code), failed=failed)


adapter_file = os.path.join(root, adapter + ".py") if adapter else None
emit(at="package")
try:
    load_package()
    if os.path.isfile(os.path.join(root, "client.py")):
        emit(at="client")
        importlib.import_module(f"{package}.client")
    package_ok = True
except BaseException as exc:
    fail("client", exc, default=os.path.join(root, "__init__.py"))
    package_ok = False
if os.path.isfile(os.path.join(root, "inference.py")):
    emit(at="inference")
    try:
        importlib.import_module("inference")
    except BaseException as exc:
        fail("inference", exc, default=os.path.join(root, "inference.py"))
if tests:
    collect()  # while the runtime stage plays the server
if adapter and package_ok:
    try:  # seconds of imports, also before the server is handed over
        import transformers.utils  # noqa: F401
    except BaseException:
        pass  # live() says why the schemas were not checked
go = sys.stdin.readline().split()
if len(go) == 2 and go[0] == "go":
    os.environ["ENV_URL"] = go[1]  # the adapter reads it at import or when built
os.environ.pop("ENV_URLS", None)  # the lane plays one server, not the user's list
cls = None
if adapter and package_ok:
    emit(at="adapter")
    try:
        cls = adapter_class(importlib.import_module(f"{package}.{adapter}"))
    except BaseException as exc:
        fail("adapter", exc, default=adapter_file)
if cls is not None and go[:1] == ["go"]:
    live(cls)
elif cls is not None:
    emit(event="note", text="the server did not answer: the adapter was not built or played")
emit(event="done")
out.flush()
os._exit(0)  # sessions' event-loop threads must not hold the exit
