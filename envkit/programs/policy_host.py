"""Serve an environment's policy (``module:callable``) over stdin/stdout (run as
``python -c <this text> ROOT SPEC`` in the environment directory), for
:class:`envkit.policy.PolicyProcess`.

Runs in the ENVIRONMENT's interpreter, which may not have envkit: standard library and what
the environment installs only. ``ROOT`` is put first on ``sys.path``. Protocol: first line
out ``{"ready": true}``, or ``{"error": "cannot load ..."}`` and exit code 3; then, for each
line in (``{"observation": {...}}``), one line out: ``{"action": {...}}`` or
``{"error": "..."}``. The policy's own prints go to stderr.
"""

import importlib
import json
import sys


def load(spec):
    """The callable ``spec`` (``module:attr.attr``) names."""
    module, _, attr = spec.partition(":")
    fn = importlib.import_module(module)
    for part in attr.split("."):
        fn = getattr(fn, part)
    if not callable(fn):
        raise TypeError(f"{spec} is not callable")
    return fn


def main(argv):
    root, spec = argv[0], argv[1]
    sys.path.insert(0, root)
    out = sys.stdout
    sys.stdout = sys.stderr  # the policy's prints must not corrupt the protocol
    try:
        fn = load(spec)
        out.write(json.dumps({"ready": True}) + "\n")
        out.flush()
    except BaseException as exc:
        out.write(json.dumps({"error": f"cannot load {spec}: {type(exc).__name__}: {exc}"}) + "\n")
        out.flush()
        sys.exit(3)
    for line in sys.stdin:
        try:
            obs = json.loads(line)["observation"]
            action = fn(obs)
            if hasattr(action, "model_dump"):
                action = action.model_dump(exclude={"metadata"})
            if not isinstance(action, dict):
                raise TypeError(f"returned {type(action).__name__}, expected a dict")
            out.write(json.dumps({"action": action}) + "\n")
        except BaseException as exc:
            out.write(json.dumps({"error": f"{type(exc).__name__}: {exc}"}) + "\n")
        out.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
