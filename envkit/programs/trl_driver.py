"""The training-path lane's driver: one child process of the environment's interpreter that
imports the environment's training-side code and plays its TRL adapter the way a trainer does
(:mod:`envkit.validation.lanes.training` starts it and reads what it prints).

Runs in the ENVIRONMENT's interpreter, which may not have envkit: standard library and what
the environment installs only. Run as ``python -c <this text> ARGS`` with the environment
directory as working directory (its ``sys.path`` is then that of ``python -c``: the working
directory first), so that the driver's own frames (``<string>``) are never taken for the
environment's in a traceback.

``sys.argv[1:]``: ``ROOT PACKAGE ADAPTER ORACLE SEED MAX_STEPS TESTS``: the environment
directory (absolute), its package's import name, the adapter's module name (``"trl_env"``,
``""``: none), the oracle (``module:callable``, ``""``: none), the seed of the episode, the
steps after which it is cut, the test folder to collect (``""``: none).

Protocol: after the imports and the collection, one line on stdin: ``go URL`` (the server to
play, set as ``ENV_URL`` before the adapter is imported) or anything else (no server: the
adapter is imported, not built). On stdout, one JSON object a line: ``{"at": STEP}`` when a
step starts (``package``, ``client``, ``inference``, ``collect``, ``adapter``, ``build``,
``reset``, ``play``, ``reward``) and ``{"event": ...}`` for what was found (``fail``,
``note``, ``tools``, ``schemas``, ``reset``, ``played``, ``reward``, ``collect``), the last
one ``{"event": "done"}``. The environment's own prints go to stderr.
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

VENDOR = (os.sep + "site-packages" + os.sep, os.sep + ".venv" + os.sep)


def defined(func):
    """(file, line, text) of a function's `def`."""
    try:
        lines, start = inspect.getsourcelines(func)
        return inspect.getsourcefile(func), start, lines[0].strip()
    except (OSError, TypeError):
        return None, None, ""


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


class Driver:
    """One run of the driver: its arguments (see the module docstring) and the protocol's
    stream ``out`` (the real stdout)."""

    def __init__(self, argv, out):
        root, package, adapter, oracle_spec, seed, max_steps, tests = argv[:7]
        self.root, self.package, self.adapter, self.tests = root, package, adapter, tests
        self.oracle_spec, self.seed, self.max_steps = oracle_spec, int(seed), int(max_steps)
        self.out = out
        self.adapter_file = os.path.join(root, adapter + ".py") if adapter else None

    def emit(self, **item):
        self.out.write(json.dumps(item, default=repr) + "\n")
        self.out.flush()

    def inside(self, path):
        path = os.path.abspath(path or "")
        rest = path[len(self.root) :]
        return path.startswith(self.root + os.sep) and not any(v in rest for v in VENDOR)

    def where(self, exc, default=None):
        """(file, line, text) of the last traceback frame inside the environment."""
        if isinstance(exc, SyntaxError) and self.inside(exc.filename):
            return exc.filename, exc.lineno, (exc.text or "").strip()
        found = (default, None, "")
        for frame in traceback.extract_tb(exc.__traceback__):
            if self.inside(frame.filename):
                found = (frame.filename, frame.lineno, (frame.line or "").strip())
        return found

    def fail(self, phase, exc, default=None, at=None, **extra):
        file, line, text = at or self.where(exc, default)
        missing = exc.name if isinstance(exc, ModuleNotFoundError) else None
        self.emit(
            event="fail",
            phase=phase,
            error=f"{type(exc).__name__}: {exc}".strip(),
            file=file,
            line=line,
            text=text,
            missing=missing,
            **extra,
        )

    def load_package(self):
        """The environment directory as the package `package`, whether installed or not."""
        root, package = self.root, self.package
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

    def adapter_class(self, module):
        classes = [
            c
            for c in vars(module).values()
            if inspect.isclass(c)
            and c.__module__ == module.__name__
            and callable(getattr(c, "reset", None))
        ]
        if not classes:
            raise LookupError(
                f"{self.adapter}.py defines no class with a `reset` method (TRL's "
                "environment_factory needs one)"
            )
        named = [c for c in classes if c.__name__.endswith("TRLEnv")]
        return (named or classes)[0]

    def play(self, env, cls, tools, rec):
        emit, oracle_spec = self.emit, self.oracle_spec
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
                    text=f"the oracle `{oracle_spec}` did not load ({exc}); the tools were not "
                    "played",
                )
                return
        else:
            emit(
                event="note",
                text="no oracle is declared (`envkit.oracle`): the tools were not played",
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
        for _ in range(self.max_steps):
            if rec.result is None or getattr(rec.result, "done", False):
                break
            fields = {k: v for k, v in dump(policy(rec.observation())).items() if k != "metadata"}
            call, error = match(env, tools, rec, fields)
            if call is None:
                if error is not None:
                    self.fail(
                        "play", error[1], default=self.adapter_file, tool=error[0], action=fields
                    )
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
                self.fail("play", exc, default=self.adapter_file, tool=call[0], action=fields)
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

    def live(self, cls):
        emit = self.emit
        emit(at="build")
        try:
            env = cls()  # TRL: factory() with no arguments
        except BaseException as exc:
            self.fail("build", exc, default=self.adapter_file)
            return
        tools = [
            n
            for n, _ in inspect.getmembers(type(env), predicate=inspect.isfunction)
            if n not in ("reset", "get_reward") and not n.startswith("_")
        ]
        emit(event="tools", tools=tools, get_reward=callable(getattr(env, "get_reward", None)))
        try:  # the environment's transformers, when it has one
            from transformers.utils import get_json_schema
        except BaseException as exc:
            emit(event="schemas", checked=False, why=f"{type(exc).__name__}: {exc}")
        else:
            emit(event="schemas", checked=True)
            for name in tools:
                try:
                    get_json_schema(getattr(env, name))
                except BaseException as exc:
                    self.fail("schema", exc, tool=name, at=defined(getattr(type(env), name)))
        rec = Recorder(env)
        rec.client()
        emit(at="reset")
        try:
            text = env.reset(prompt=[{"role": "user", "content": "Play."}], seed=self.seed)
        except BaseException as exc:
            self.fail("reset", exc, default=self.adapter_file)
            return
        file, line, code = defined(type(env).reset)
        emit(
            event="reset",
            text=text if isinstance(text, str) else None,
            file=file,
            line=line,
            code=code,
        )
        rec.client()  # reset may have opened a new session
        self.play(env, type(env), tools, rec)
        if hasattr(env, "__exit__"):
            env.__exit__(None, None, None)

    def collect(self):
        """`pytest --collect-only` of `tests/` in this process: the environment's modules (and
        openenv, seconds to import) are loaded once for the adapter and the tests."""
        self.emit(at="collect")
        try:  # the environment's pytest, when it has one
            import pytest
        except BaseException as exc:
            self.emit(event="collect", installed=False, why=f"{type(exc).__name__}: {exc}")
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
            os.path.join(self.root, self.tests),
        ]
        code = pytest.main(args, plugins=[Reports()])
        self.emit(event="collect", installed=True, code=int(code), failed=failed)

    def run(self):
        """Every step, in order (see the module docstring)."""
        emit, root, package, adapter = self.emit, self.root, self.package, self.adapter
        emit(at="package")
        try:
            self.load_package()
            if os.path.isfile(os.path.join(root, "client.py")):
                emit(at="client")
                importlib.import_module(f"{package}.client")
            package_ok = True
        except BaseException as exc:
            self.fail("client", exc, default=os.path.join(root, "__init__.py"))
            package_ok = False
        if os.path.isfile(os.path.join(root, "inference.py")):
            emit(at="inference")
            try:
                importlib.import_module("inference")
            except BaseException as exc:
                self.fail("inference", exc, default=os.path.join(root, "inference.py"))
        if self.tests:
            self.collect()  # while the runtime stage plays the server
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
                cls = self.adapter_class(importlib.import_module(f"{package}.{adapter}"))
            except BaseException as exc:
                self.fail("adapter", exc, default=self.adapter_file)
        if cls is not None and go[:1] == ["go"]:
            self.live(cls)
        elif cls is not None:
            emit(
                event="note", text="the server did not answer: the adapter was not built or played"
            )
        emit(event="done")


def main(argv):
    driver = Driver(argv, sys.stdout)
    sys.path.insert(0, driver.root)
    sys.stdout = sys.stderr  # the environment's prints must not corrupt the protocol
    driver.run()
    driver.out.flush()
    os._exit(0)  # sessions' event-loop threads must not hold the exit


if __name__ == "__main__":
    main(sys.argv[1:])
