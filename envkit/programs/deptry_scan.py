"""deptry's undeclared imports of an environment, and which declared distributions provide
them (run as ``python -I FILE SHIM OUT ARGS_JSON`` in the environment directory).

Runs in the ENVIRONMENT's interpreter, which may not have envkit or deptry: ``SHIM`` is a folder
of links to envkit's copy of deptry and its requirements (and to
:mod:`envkit.programs.absent_dists` as ``_envkit_absent_dists``), put first on ``sys.path``;
it has no ``*.dist-info``, so the metadata deptry and the closure read are the environment's
own. ``ARGS_JSON``: ``{"deptry": [deptry's argv], "requires": [PEP 508 strings],
"scope": [files whose imports count]}``.

Writes deptry's JSON report to ``OUT`` and ``{"absent": [declared distributions not
installed, canonical names], "provided": {module: [installed distributions of the declared
closure that provide it]}}`` to ``OUT.env.json``. The closure is not walked when a declared
distribution is absent (its modules are unknown).
"""

import json
import re
import sys
from importlib import metadata


def top_levels(dist):
    """The top-level modules an installed distribution provides."""
    text = dist.read_text("top_level.txt")
    if text is None:
        text = "\n".join(
            re.findall(r"^([A-Za-z0-9_]+)(?:/|\.py,)", dist.read_text("RECORD") or "", re.MULTILINE)
        )
    return set(text.split())


def main(argv):
    shim, out, args = argv[0], argv[1], json.loads(argv[2])
    sys.path.insert(0, shim)
    # importable only now, from the shim (deptry and its requirements) or the environment
    from _envkit_absent_dists import absent as absent_names
    from deptry.cli import cli
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    try:
        cli.main(args=args["deptry"], prog_name="deptry")
    except SystemExit:
        pass
    with open(out) as report:
        flagged = {
            v["module"].split(".")[0]
            for v in json.load(report)
            if v["location"]["file"].replace("\\", "/").removeprefix("./") in args["scope"]
        }
    top = [Requirement(r) for r in args["requires"]]
    absent = [canonicalize_name(n) for n in absent_names([req.name for req in top])]
    seen, dists, todo = set(), {}, [] if absent else top
    while todo and not all(dists.get(canonicalize_name(m)) for m in flagged):
        req = todo.pop(0)
        key = (canonicalize_name(req.name), frozenset(req.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = dists[key[0]] = dists.get(key[0]) or metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            dists[key[0]] = None
            continue
        for text in dist.requires or []:
            sub = Requirement(text)
            envs = [{"extra": e} for e in req.extras] or [{"extra": ""}]
            if sub.marker is None or any(sub.marker.evaluate(e) for e in envs):
                todo.append(sub)
    provided = {}
    for m in flagged:
        named = canonicalize_name(m)
        if dists.get(named) is not None:
            provided[m] = [named]
        else:
            provided[m] = [n for n, d in dists.items() if d is not None and m in top_levels(d)]
    with open(out + ".env.json", "w") as env:
        json.dump({"absent": absent, "provided": provided}, env)


if __name__ == "__main__":
    main(sys.argv[1:])
