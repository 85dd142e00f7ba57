"""EK1xx manifest rules (openenv.yaml).

Facts (docs/protocol.md): ``openenv.yaml`` holds ``spec_version``, ``name``, ``type``,
``runtime``, ``app: module:attr``, ``port``; envkit adds a strict ``validation:`` block
(envkit.manifest). No upstream schema exists, so envkit's models are the schema.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from envkit.findings import Finding, Location, Rule, Severity, register
from envkit.manifest import MANIFEST_NAME
from envkit.validation.context import StaticContext

if TYPE_CHECKING:
    from pydantic import ValidationError

MANIFEST_MISSING = register(
    "EK101", "manifest-missing", Severity.ERROR,
    summary="`openenv.yaml` is missing.",
    what="The environment directory has an `openenv.yaml` file.",
    why="Every OpenEnv tool (openenv push, TRL's loaders, envkit) finds the server's `app`, "
        "`port` and `name` there; without it the directory is not an environment.",
    example="A directory with `server/app.py` and `models.py` but no `openenv.yaml`.",
    fix="Create `openenv.yaml` with `spec_version: 1`, `name`, `type: space`, "
        "`runtime: fastapi`, `app: server.app:app` and `port: 8000` (or start from "
        "`envkit init`).",
)
MANIFEST_YAML = register(
    "EK102", "manifest-invalid-yaml", Severity.ERROR,
    summary="`openenv.yaml` is not valid YAML or not a mapping.",
    what="`openenv.yaml` parses as YAML (no duplicate keys) and its top level is a mapping.",
    why="A manifest that does not parse stops every tool at its first line; the error "
        "location tells you where.",
    example="`name: my-env\\nport 8000` (missing colon): `openenv.yaml:2:1 could not find "
            "expected ':'`.",
    fix="Fix the YAML syntax at the reported line and column.",
)
MANIFEST_SCHEMA = register(
    "EK103", "manifest-schema", Severity.ERROR,
    summary="A required manifest key is missing or has the wrong type.",
    what="`openenv.yaml` follows the manifest schema: `name` present, `spec_version` an "
         "integer, `type`/`runtime` strings, `variables` a mapping of strings.",
    why="openenv push reads `name` and `variables`; a wrong type there fails the upload late.",
    example="`variables: [A, B]` (a list instead of a mapping).",
    fix="Give the key the type the message names.",
)
MANIFEST_NAME_RULE = register(
    "EK104", "manifest-bad-name", Severity.ERROR,
    summary="`name` is not a valid package and Space name.",
    what="`name` is ASCII letters, digits, `-` or `_`, starts with a letter, at most 64 "
         "characters, and does not shadow a module every environment imports (`server`, "
         "`models`, ...).",
    why="The name becomes the Python package and the Hugging Face Space name; the Hub "
        "rejects other characters and a package called `server` breaks `server.app:app`.",
    example="`name: my env!` or `name: server`.",
    fix="Rename it, e.g. `name: my_env`.",
)
MANIFEST_APP_FORM = register(
    "EK105", "manifest-bad-app", Severity.ERROR,
    summary="`app` is not of the form `module.path:attribute`.",
    what="`app` names a module and an attribute separated by one colon.",
    why="uvicorn and openenv load the server with exactly this string; anything else fails "
        "at start-up.",
    example="`app: server/app.py` or `app: server.app`.",
    fix="Write `app: server.app:app`.",
)
MANIFEST_APP_MISSING = register(
    "EK106", "manifest-app-not-found", Severity.ERROR,
    summary="The module or attribute named by `app` does not exist.",
    what="The module file of `app` exists under the environment directory, parses, and "
         "defines the attribute at module level.",
    why="The server would fail to start with an ImportError or AttributeError inside the "
        "container, after the build.",
    example="`app: server.main:app` while the file is `server/app.py`.",
    fix="Point `app` at the module and attribute that create the FastAPI app "
        "(usually `server.app:app`).",
)
MANIFEST_PORT = register(
    "EK107", "manifest-bad-port", Severity.ERROR,
    summary="`port` is not an integer in 1..65535.",
    what="`port` is an integer between 1 and 65535.",
    why="The port is written into the Dockerfile, the Space card's `app_port` and every "
        "client URL; a bad one makes the Space unreachable.",
    example="`port: 80000` or `port: \"8000a\"`.",
    fix="Use a port such as `8000`.",
)
MANIFEST_VALIDATION = register(
    "EK108", "manifest-bad-validation", Severity.ERROR,
    summary="A value in the `validation:` block is invalid.",
    what="`reward_range` is `[lo, hi]` with finite `lo < hi`; `max_steps` >= 1; `oracle` is "
         "`module:callable`; `seeds` are integers >= 0; `floor_margin` >= 0; the timeouts "
         "are > 0.",
    why="The runtime checks read these values; a wrong range would make every reward "
        "finding wrong.",
    example="`reward_range: [1.0, 0.0]` (lo >= hi) or `max_steps: 0`.",
    fix="Correct the value the message names.",
)
MANIFEST_UNKNOWN_KEY = register(
    "EK109", "manifest-unknown-key", Severity.ERROR,
    summary="An unknown key in `validation:` or a misspelt top-level key.",
    what="Every key inside `validation:` is known, and no top-level key is a near-miss of a "
         "known one (`valdation`, `prot`).",
    why="A typo would otherwise be ignored silently and the checks would run with defaults.",
    example="`validation: {max_step: 8}` (should be `max_steps`).",
    fix="Rename the key to the one suggested.",
)
MANIFEST_ORACLE_MISSING = register(
    "EK110", "manifest-oracle-not-found", Severity.ERROR,
    summary="The module or callable named by `validation.oracle` does not exist.",
    what="The module file of `validation.oracle` exists under the environment directory and "
         "defines the callable at module level.",
    why="The oracle proves the maximum reward is reachable; a wrong path makes that check "
        "fail with an import error instead of a verdict.",
    example="`oracle: server.oracle:solve` while the function is called `policy`.",
    fix="Point `oracle` at a function `observation dict -> action dict`, e.g. "
        "`server.oracle:policy`.",
)

KNOWN_TOP_LEVEL = ("spec_version", "name", "type", "runtime", "app", "port", "variables",
                   "validation", "description", "version", "author", "tags")
_VALIDATION_KEYS = ("reward_range", "max_steps", "oracle", "seeds", "floor_margin",
                    "step_timeout_s", "startup_timeout_s")
_CODES = ("EK101", "EK102", "EK103", "EK104", "EK105", "EK106", "EK107", "EK108", "EK109",
          "EK110")


def load(ctx: StaticContext) -> Iterator[Finding]:
    """Parse openenv.yaml into ``ctx`` (``manifest_doc``, ``manifest``) and yield EK101-EK109
    findings about it."""
    from pydantic import ValidationError

    from envkit.manifest import Manifest, ManifestSyntaxError, load_yaml, to_plain

    path = ctx.root / MANIFEST_NAME
    if not path.is_file():
        ctx.skip([c for c in _CODES if c != "EK101"], f"no {MANIFEST_NAME}")
        yield MANIFEST_MISSING.finding(
            f"Expected `{MANIFEST_NAME}` in the environment directory; found none. Most likely "
            "this is not the environment's root directory.",
            location=Location(MANIFEST_NAME))
        return
    try:
        doc = load_yaml(path)
    except ManifestSyntaxError as exc:
        ctx.skip([c for c in _CODES if c not in ("EK101", "EK102")], "openenv.yaml is not YAML")
        yield MANIFEST_YAML.finding(exc.message.split(": ", 1)[-1], location=exc.location)
        return
    except Exception as exc:  # noqa: BLE001 - unreadable file
        ctx.skip([c for c in _CODES if c not in ("EK101", "EK102")], "openenv.yaml unreadable")
        yield MANIFEST_YAML.finding(f"`{MANIFEST_NAME}` cannot be read: {exc}.",
                                    location=Location(MANIFEST_NAME))
        return
    ctx.manifest_doc = doc
    if not isinstance(doc.data, dict):
        ctx.skip([c for c in _CODES if c not in ("EK101", "EK102")], "openenv.yaml not a mapping")
        got = "an empty file" if doc.data is None else f"a {type(doc.data).__name__}"
        yield MANIFEST_YAML.finding(
            f"`{MANIFEST_NAME}` must be a mapping of keys to values; got {got}.",
            location=Location(MANIFEST_NAME, 1, 1))
        return
    yield from _typos(ctx)
    try:
        ctx.manifest = Manifest.model_validate(to_plain(doc.data))
    except ValidationError as exc:
        yield from _schema_findings(ctx, exc)
    yield from _name(ctx)


def _typos(ctx: StaticContext) -> Iterator[Finding]:
    data = ctx.manifest_data
    for key in data:
        if not isinstance(key, str) or key in KNOWN_TOP_LEVEL:
            continue
        close = difflib.get_close_matches(key, KNOWN_TOP_LEVEL, n=1, cutoff=0.75)
        if close and close[0] not in data:
            yield MANIFEST_UNKNOWN_KEY.finding(
                f"Top-level key `{key}` is unknown; did you mean `{close[0]}`? As written it "
                "is ignored.", location=ctx.manifest_loc(key), fix=f"Rename `{key}` to "
                f"`{close[0]}`.")


def _schema_findings(ctx: StaticContext, exc: ValidationError) -> Iterator[Finding]:
    doc = ctx.manifest_doc
    for err in exc.errors():
        loc = tuple(err.get("loc", ()))
        head = loc[0] if loc else ""
        dotted = ".".join(str(p) for p in loc) or "(top level)"
        msg = err.get("msg", "invalid value")
        msg = msg.removeprefix("Value error, ")
        value = err.get("input")
        shown = "" if err.get("type") in ("missing", "extra_forbidden") or isinstance(
            value, dict) else f"; got {value!r}"
        where = doc.locate(loc)
        if err.get("type") == "missing":
            yield MANIFEST_SCHEMA.finding(f"`{dotted}` is required but missing.", location=where)
        elif head == "name":
            yield MANIFEST_NAME_RULE.finding(f"`name`: {msg}{shown}.", location=where)
        elif head == "app":
            yield MANIFEST_APP_FORM.finding(
                f"`app` must be of the form `module.path:attribute`, e.g. `server.app:app`"
                f"{shown}.", location=where)
        elif head == "port":
            yield MANIFEST_PORT.finding(
                f"`port` must be an integer in 1..65535{shown}.", location=where)
        elif head == "validation" and err.get("type") == "extra_forbidden":
            key = str(loc[-1])
            close = difflib.get_close_matches(key, _VALIDATION_KEYS, n=1, cutoff=0.6)
            hint = f"; did you mean `{close[0]}`?" if close else \
                f"; known keys: {', '.join(_VALIDATION_KEYS)}."
            yield MANIFEST_UNKNOWN_KEY.finding(
                f"`{dotted}` is not a known key of the `validation:` block{hint} As written "
                "it is ignored.", location=where,
                fix=f"Rename `{key}` to `{close[0]}`." if close else None)
        elif head == "validation":
            yield MANIFEST_VALIDATION.finding(f"`{dotted}`: {msg}{shown}.", location=where)
        else:
            yield MANIFEST_SCHEMA.finding(f"`{dotted}`: {msg}{shown}.", location=where)


def _name(ctx: StaticContext) -> Iterator[Finding]:
    from envkit.errors import UsageError
    from envkit.names import normalise_name

    name = ctx.manifest_data.get("name")
    if not isinstance(name, str):
        return
    try:
        normalise_name(name)
    except UsageError as exc:
        yield MANIFEST_NAME_RULE.finding(
            f"`name` must be a valid package and Space name: {exc.message}",
            location=ctx.manifest_loc("name"), fix=exc.hint or None)


def _defines(tree: ast.Module, attr: str) -> bool:
    """Whether a module binds ``attr`` at its top level (assignment, def, class, import),
    including inside top-level ``try``/``if`` blocks."""
    def scan(body: list[ast.stmt]) -> bool:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and node.name == attr:
                return True
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name) and n.id == attr:
                            return True
            if isinstance(node, (ast.AnnAssign, ast.AugAssign)) and \
                    isinstance(node.target, ast.Name) and node.target.id == attr:
                return True
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    if (alias.asname or alias.name.split(".")[0]) == attr or alias.name == "*":
                        return True
            if isinstance(node, ast.Try):
                blocks = [node.body, node.orelse, node.finalbody] + [h.body for h in node.handlers]
                if any(scan(b) for b in blocks):
                    return True
            if isinstance(node, (ast.If, ast.With)):
                if scan(node.body) or scan(getattr(node, "orelse", [])):
                    return True
        return False

    return scan(tree.body)


def _target_findings(ctx: StaticContext, spec: str, keys: tuple[str, ...], rule: Rule, what: str
                     ) -> Iterator[Finding]:
    module, _, attr = spec.partition(":")
    rel = ctx.module_file(module)
    where = ctx.manifest_loc(*keys)
    if rel is None:
        expected = module.replace(".", "/") + ".py"
        yield rule.finding(
            f"`{'.'.join(keys)}: {spec}` must name a module in the environment; "
            f"`{expected}` does not exist. Most likely the module was renamed or moved.",
            location=where)
        return
    err = ctx.syntax_error(rel)
    if err is not None:
        yield rule.finding(
            f"`{rel}` (the {what} module) must be valid Python; it has a syntax error at line "
            f"{err.lineno}: {err.msg}.", location=Location(rel, err.lineno, err.offset),
            fix=f"Fix the syntax error in `{rel}`.")
        return
    tree = ctx.python(rel)
    if tree is not None and not _defines(tree, attr):
        yield rule.finding(
            f"`{rel}` must define `{attr}` at module level ({what} `{spec}`); it does not.",
            location=where)


def check(ctx: StaticContext) -> Iterator[Finding]:
    """EK106 and EK110 (the manifest's other findings come from :func:`load`)."""
    from envkit.manifest import APP_PATTERN

    if ctx.manifest_doc is None:
        return
    app = ctx.manifest_data.get("app", "server.app:app")
    if isinstance(app, str) and APP_PATTERN.fullmatch(app):
        yield from _target_findings(ctx, app, ("app",), MANIFEST_APP_MISSING, "app")
    else:
        ctx.skip(["EK106"], "`app` is malformed (EK105)")
    validation = ctx.manifest_data.get("validation")
    oracle = validation.get("oracle") if isinstance(validation, dict) else None
    if isinstance(oracle, str) and APP_PATTERN.fullmatch(oracle):
        yield from _target_findings(ctx, oracle, ("validation", "oracle"),
                                    MANIFEST_ORACLE_MISSING, "oracle")
    else:
        ctx.skip(["EK110"], "no oracle declared")
