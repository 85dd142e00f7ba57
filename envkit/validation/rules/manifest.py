"""EK1xx manifest rules (openenv.yaml).

Facts (docs/rules.md): ``openenv.yaml`` holds ``spec_version``, ``name``,
``version``, ``type``, ``runtime``, ``app: module:attr``, ``port``; OpenEnv 0.10 owns the
``validation:`` block (RFC 008; ``openenv validate`` reads it), envkit's own facts live in a
top-level ``envkit:`` section. envkit.envdir.manifest mirrors OpenEnv's models, so every way
``openenv validate`` would reject the block is a located EK11x finding here.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any

from pydantic import ValidationError

from envkit.envdir.constants import APP_PATTERN, DEFAULT_APP, ENVKIT_KEYS, MANIFEST_NAME
from envkit.envdir.manifest import (
    Manifest,
    ManifestSyntaxError,
    split_validation,
    to_plain,
    user_loc,
)
from envkit.envdir.rfc008 import (
    RFC008_KEYS,
    CapabilitiesSpec,
    ExecutionDeclaration,
    JudgePin,
    NetworkPolicy,
    OracleDeclaration,
    ResourceDeclaration,
    RewardDeclaration,
    TaskDistributionPin,
    TypeSpec,
    VerifierBinding,
    policy_violations,
)
from envkit.errors import UsageError
from envkit.findings import Finding, Location, Rule, Severity, register
from envkit.names import normalise_name
from envkit.probe_plan import PlanError, read_plan
from envkit.validation.context import StaticContext

MANIFEST_MISSING = register(
    "EK101",
    "manifest-missing",
    Severity.ERROR,
    rfc008="static.manifest",
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
    "EK102",
    "manifest-invalid-yaml",
    Severity.ERROR,
    rfc008="static.manifest",
    summary="`openenv.yaml` is not valid YAML or not a mapping.",
    what="`openenv.yaml` parses as YAML (no duplicate keys) and its top level is a mapping.",
    why="A manifest that does not parse stops every tool at its first line; the error "
    "location tells you where.",
    example="`name: my-env\\nport 8000` (missing colon): `openenv.yaml:2:1 could not find "
    "expected ':'`.",
    fix="Fix the YAML syntax at the reported line and column.",
)
MANIFEST_SCHEMA = register(
    "EK103",
    "manifest-schema",
    Severity.ERROR,
    rfc008="static.manifest",
    summary="A required manifest key is missing or has the wrong type.",
    what="`openenv.yaml` follows the manifest schema: `name` present, `spec_version` an "
    "integer, `type`/`runtime` strings, `variables` a mapping of strings.",
    why="openenv push reads `name` and `variables`; a wrong type there fails the upload late.",
    example="`variables: [A, B]` (a list instead of a mapping).",
    fix="Give the key the type the message names.",
)
MANIFEST_NAME_RULE = register(
    "EK104",
    "manifest-bad-name",
    Severity.ERROR,
    rfc008="static.manifest",
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
    "EK105",
    "manifest-bad-app",
    Severity.ERROR,
    rfc008="static.manifest",
    summary="`app` is not of the form `module.path:attribute`.",
    what="`app` names a module and an attribute separated by one colon.",
    why="uvicorn and openenv load the server with exactly this string; anything else fails "
    "at start-up.",
    example="`app: server/app.py` or `app: server.app`.",
    fix="Write `app: server.app:app`.",
)
MANIFEST_APP_MISSING = register(
    "EK106",
    "manifest-app-not-found",
    Severity.ERROR,
    rfc008="static.manifest",
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
    "EK107",
    "manifest-bad-port",
    Severity.ERROR,
    rfc008="static.manifest",
    summary="`port` is not an integer in 1..65535.",
    what="`port` is an integer between 1 and 65535.",
    why="The port is written into the Dockerfile, the Space card's `app_port` and every "
    "client URL; a bad one makes the Space unreachable.",
    example='`port: 80000` or `port: "8000a"`.',
    fix="Use a port such as `8000`.",
)
MANIFEST_VALIDATION = register(
    "EK108",
    "manifest-bad-validation",
    Severity.ERROR,
    summary="A value in envkit's section of the manifest (`envkit:`) is invalid.",
    what="In `envkit:` (or envkit's legacy keys under `validation:`): `max_steps` >= 1; "
    "`oracle` is `module:callable`; `seeds` are integers >= 0; `step_timeout_s` and "
    "`startup_timeout_s` are > 0; legacy `reward_range` is `[lo, hi]` with finite "
    "`lo < hi` and legacy `floor_margin` >= 0.",
    why="envkit's runtime checks read these values; a wrong one would make every finding "
    "that depends on it wrong.",
    example="`envkit: {max_steps: 0}` or `envkit: {oracle: server/oracle.py}`.",
    fix="Correct the value the message names.",
)
MANIFEST_UNKNOWN_KEY = register(
    "EK109",
    "manifest-unknown-key",
    Severity.ERROR,
    rfc008="static.manifest",
    summary="An unknown key in `envkit:` or a misspelt top-level key.",
    what="Every key inside envkit's section `envkit:` is known (`oracle`, `max_steps`, "
    "`seeds`, `step_timeout_s`, `startup_timeout_s`), and no top-level key is a "
    "near-miss of a known one (`valdation`, `prot`).",
    why="A typo would otherwise be ignored silently and the checks would run with defaults.",
    example="`envkit: {max_step: 8}` (should be `max_steps`).",
    fix="Rename the key to the one suggested.",
)
MANIFEST_ORACLE_MISSING = register(
    "EK110",
    "manifest-oracle-not-found",
    Severity.ERROR,
    summary="The module or callable named by `envkit.oracle` does not exist.",
    what="The module file of `envkit.oracle` exists under the environment directory and "
    "defines the callable at module level.",
    why="The oracle proves the maximum reward is reachable; a wrong path makes that check "
    "fail with an import error instead of a verdict.",
    example="`oracle: server.oracle:solve` while the function is called `policy`.",
    fix="Point `oracle` at a function `observation dict -> action dict`, e.g. "
    "`server.oracle:policy`.",
)

VALIDATION_MISSING = register(
    "EK111",
    "validation-block-missing",
    Severity.WARNING,
    rfc008="static.manifest",
    summary="`openenv.yaml` has no RFC 008 `validation:` block.",
    what="`openenv.yaml` declares OpenEnv's `validation:` block (RFC 008): `reward`, "
    "`resources`, `capabilities`, `types`.",
    why="`openenv validate` 0.10 FAILs `static.manifest` at every level without it "
    '("openenv.yaml has no `validation:` block"). envkit still validates the '
    "environment with its defaults (reward range [0, 1]).",
    example="An `openenv.yaml` from `openenv init` of openenv-core 0.3 (before 0.10).",
    fix='Add the block (see README, "The manifest") or run `envkit migrate`.',
)
VALIDATION_REQUIRED = register(
    "EK112",
    "validation-field-missing",
    Severity.ERROR,
    rfc008="static.manifest",
    summary="A field RFC 008 requires is missing from `validation:`.",
    what="`validation:` has `reward.floor_margin`, `resources` (`cpu`, `memory_mb`, "
    "`disk_mb`, `episode_timeout_s`), `capabilities.verifier.kind`, `types.tags`, and "
    "every field a declared section requires (`judge.model`, `capabilities.oracle.form` "
    "...).",
    why='`openenv validate` 0.10 FAILs `static.manifest` with "Field required" and '
    "stops: no runtime check runs.",
    example="`validation: {reward: {range: [0, 1]}, ...}` without `floor_margin`.",
    fix="Add the missing field (`envkit init` writes a complete block).",
)
VALIDATION_VALUE = register(
    "EK113",
    "validation-bad-value",
    Severity.ERROR,
    rfc008="static.manifest",
    summary="A value in RFC 008's `validation:` block has the wrong type or range.",
    what="Every value in `validation:` has the type and range of OpenEnv 0.10's manifest "
    "model: `reward.range` strictly increasing (and finite), tolerances >= 0, "
    "resources > 0, `verifier.entry` iff `kind: script`, `execution` paths "
    "package-relative without `..`; with `execution` (schema 2) every number finite.",
    why="`openenv validate` FAILs `static.manifest` on any of them; envkit checks rewards "
    "against `reward.range`.",
    example="`reward: {range: [1.0, 0.0], floor_margin: 0.1}` or `resources: {cpu: 0, ...}`.",
    fix="Correct the value the message names.",
)
VALIDATION_EXTRA = register(
    "EK114",
    "validation-unknown-field",
    Severity.ERROR,
    rfc008="static.manifest",
    summary="An unknown key inside a section of `validation:`.",
    what="Inside `validation.reward`, `resources`, `capabilities`, `types`, `network`, "
    "`judge`, `task_distribution` and `execution`, every key is one OpenEnv's manifest "
    "knows (its models forbid others).",
    why='`openenv validate` FAILs `static.manifest` with "Extra inputs are not permitted".',
    example="`resources: {memory: 512, ...}` (should be `memory_mb`).",
    fix="Rename the key to the one suggested, or remove it.",
)
VALIDATION_IGNORED = register(
    "EK115",
    "validation-key-ignored",
    Severity.WARNING,
    rfc008="static.manifest",
    summary="A key directly under `validation:` that OpenEnv ignores.",
    what="Every key directly under `validation:` is an RFC 008 section (`reward`, `judge`, "
    "`resources`, `task_distribution`, `network`, `capabilities`, `types`, "
    "`execution`) or one of envkit's legacy keys (EK119).",
    why="OpenEnv copies only the sections it knows out of the block: a misspelt section "
    "(`resource:`) is dropped without a word, and its defaults apply.",
    example="`validation: {rewards: {...}}`.",
    fix="Rename the key to the section suggested, or move envkit's own keys to `envkit:`.",
)
VALIDATION_POLICY = register(
    "EK116",
    "validation-outside-policy",
    Severity.ERROR,
    rfc008="static.manifest",
    summary="A declared tolerance or budget is outside OpenEnv's policy bounds.",
    what="`reward.oracle_tolerance` <= 0.1, `reward.floor_margin` >= 0.1, "
    "`reward.variance_tolerance` <= 0.2 and `resources.episode_timeout_s` <= 3600 "
    "(OpenEnv 0.10's severity policy v2).",
    why="`openenv validate`'s `static.manifest` grader FAILs a manifest past these bounds; "
    "a loose tolerance would let a broken oracle or a degenerate policy pass.",
    example="`reward: {range: [0, 1], floor_margin: 0.05}`.",
    fix="Declare a value within the bound the message names.",
)
VALIDATION_JUDGE = register(
    "EK117",
    "validation-judge-mismatch",
    Severity.ERROR,
    rfc008="static.manifest",
    summary="`judge` (and `reward.variance_tolerance`) declared without `llm_judged`, or "
    "missing with it.",
    what="`validation.judge` and `validation.reward.variance_tolerance` are present iff "
    "`validation.capabilities.llm_judged` is true.",
    why="OpenEnv's manifest rejects the mismatch; an LLM-judged reward needs its judge "
    "pinned to be reproducible.",
    example="`capabilities: {llm_judged: true, ...}` without a `judge:` block.",
    fix="Pin the judge (`judge: {model, version}`) and declare `variance_tolerance`, or "
    "remove them when the reward is not LLM-judged.",
)
VALIDATION_ALLOWLIST = register(
    "EK118",
    "validation-allowlist-mismatch",
    Severity.ERROR,
    rfc008="static.manifest",
    summary="`network.allowed_hosts` without `mode: allowlist`, or `allowlist` without hosts.",
    what="`validation.network.allowed_hosts` is non-empty iff `validation.network.mode` is "
    "`allowlist`.",
    why="OpenEnv's manifest rejects the mismatch; hosts listed under `public` or "
    "`no-network` suggest a posture the container does not have.",
    example="`network: {mode: public, allowed_hosts: [api.example.org]}`.",
    fix="Set `mode: allowlist`, or drop `allowed_hosts`.",
)
VALIDATION_LEGACY = register(
    "EK119",
    "validation-legacy-layout",
    Severity.WARNING,
    rfc008="static.manifest",
    summary="envkit's keys sit directly under `validation:` (the layout before OpenEnv 0.10).",
    what="envkit's own keys (`reward_range`, `max_steps`, `oracle`, `seeds`, "
    "`floor_margin`, `step_timeout_s`, `startup_timeout_s`) are not directly under "
    "`validation:`.",
    why="OpenEnv 0.10 owns `validation:`: with only these keys `openenv validate` FAILs the "
    "manifest. envkit still reads them, for now.",
    example="`validation: {reward_range: [0, 1], max_steps: 8}`.",
    fix="Run `envkit migrate`: it moves them to `envkit:` and `validation.reward`, and adds "
    "the RFC 008 sections.",
)
VALIDATION_NO_EXECUTION = register(
    "EK120",
    "validation-execution-missing",
    Severity.WARNING,
    rfc008="static.manifest",
    summary="`validation:` has no `execution` section (manifest schema 1).",
    what="`validation.execution` names the Dockerfile and the runtime probe plan "
    "(manifest schema 2).",
    why="Without it `openenv validate --level runtime` SKIPs every runtime check: the "
    "environment is never started by OpenEnv's validator.",
    example="The manifest `openenv init` 0.10 writes.",
    fix="Add `execution: {kind: openenv_ws, probe_path: validation/runtime.json, "
    "dockerfile: Dockerfile, context: .}` and the plan (`envkit migrate` writes both).",
)
PROBE_PLAN = register(
    "EK121",
    "probe-plan-invalid",
    Severity.ERROR,
    rfc008="static.manifest",
    summary="The runtime probe plan (`execution.probe_path`) is missing or invalid.",
    what="The file named by `validation.execution.probe_path` exists inside the environment, "
    "is JSON of at most 64 KiB, and follows OpenEnv's plan schema 1: "
    '`plan_schema_version: "1"`, `reset: {episode_id, seed, options}`, 1-100 actions.',
    why="`openenv validate --level runtime` plays exactly this plan; a missing or invalid "
    "one is a runtime ERROR.",
    example='`validation/runtime.json` with `"actions": []`.',
    fix="Regenerate it from the oracle (`envkit migrate`), or fix the field named.",
)
EXECUTION_PATH = register(
    "EK122",
    "execution-path-missing",
    Severity.ERROR,
    rfc008="static.manifest",
    summary="`execution.dockerfile` or `execution.context` does not exist.",
    what="`validation.execution.dockerfile` is a file and `validation.execution.context` a "
    "directory inside the environment.",
    why="`openenv validate --level runtime` builds exactly that Dockerfile; a missing one "
    "fails the run before any check.",
    example="`dockerfile: Dockerfile` while the file is `server/Dockerfile`.",
    fix="Point `execution.dockerfile` at the Dockerfile (the root one is what a Docker "
    "Space builds).",
)
ENVKIT_TWICE = register(
    "EK123",
    "envkit-facts-declared-twice",
    Severity.ERROR,
    rfc008="static.manifest",
    summary="envkit's facts are declared both in `envkit:` and under `validation:`.",
    what="envkit's own keys appear in one place: the `envkit:` section, not also as legacy "
    "keys under `validation:`.",
    why="Two declarations drift apart; envkit reads `envkit:` and ignores the legacy keys.",
    example="`envkit: {max_steps: 8}` and `validation: {max_steps: 5, ...}`.",
    fix="Delete the legacy keys under `validation:` (`envkit migrate` does it).",
)

KNOWN_TOP_LEVEL = (
    "spec_version",
    "name",
    "type",
    "runtime",
    "app",
    "port",
    "variables",
    "validation",
    "envkit",
    "description",
    "version",
    "author",
    "tags",
)
_RULES = (
    MANIFEST_MISSING,
    MANIFEST_YAML,
    MANIFEST_SCHEMA,
    MANIFEST_NAME_RULE,
    MANIFEST_APP_FORM,
    MANIFEST_APP_MISSING,
    MANIFEST_PORT,
    MANIFEST_VALIDATION,
    MANIFEST_UNKNOWN_KEY,
    MANIFEST_ORACLE_MISSING,
    VALIDATION_MISSING,
    VALIDATION_REQUIRED,
    VALIDATION_VALUE,
    VALIDATION_EXTRA,
    VALIDATION_IGNORED,
    VALIDATION_POLICY,
    VALIDATION_JUDGE,
    VALIDATION_ALLOWLIST,
    VALIDATION_LEGACY,
    VALIDATION_NO_EXECUTION,
    PROBE_PLAN,
    EXECUTION_PATH,
    ENVKIT_TWICE,
)
_CODES = tuple(rule.code for rule in _RULES)
# what is left to check once the file is there but not a readable mapping
_BEYOND_YAML = tuple(c for c in _CODES if c not in (MANIFEST_MISSING.code, MANIFEST_YAML.code))


def load(ctx: StaticContext) -> Iterator[Finding]:
    """Parse openenv.yaml into ``ctx`` (``manifest_doc``, ``manifest``) and yield the findings
    about its text (every EK1xx but EK106, EK110, EK121, EK122, which :func:`check` adds)."""
    path = ctx.root / MANIFEST_NAME
    if not path.is_file():
        ctx.skip([c for c in _CODES if c != MANIFEST_MISSING.code], f"no {MANIFEST_NAME}")
        yield MANIFEST_MISSING.finding(
            f"Expected `{MANIFEST_NAME}` in the environment directory; found none. Most likely "
            "this is not the environment's root directory.",
            location=Location(MANIFEST_NAME),
        )
        return
    doc, error = ctx.envdir.manifest_doc, ctx.envdir.manifest_doc_error
    if isinstance(error, ManifestSyntaxError):
        ctx.skip(_BEYOND_YAML, "openenv.yaml is not YAML")
        yield MANIFEST_YAML.finding(error.message.split(": ", 1)[-1], location=error.location)
        return
    if doc is None:  # unreadable: a FIFO, a link out of the directory, over 1 MiB, not UTF-8
        ctx.skip(_BEYOND_YAML, "openenv.yaml unreadable")
        why = ctx.read_errors.get(MANIFEST_NAME) or error or "not UTF-8 text"
        yield MANIFEST_YAML.finding(
            f"`{MANIFEST_NAME}` cannot be read: {why}.", location=Location(MANIFEST_NAME)
        )
        return
    ctx.manifest_doc = doc
    if not isinstance(doc.data, dict):
        ctx.skip(_BEYOND_YAML, "openenv.yaml not a mapping")
        got = "an empty file" if doc.data is None else f"a {type(doc.data).__name__}"
        yield MANIFEST_YAML.finding(
            f"`{MANIFEST_NAME}` must be a mapping of keys to values; got {got}.",
            location=Location(MANIFEST_NAME, 1, 1),
        )
        return
    yield from _typos(ctx)
    try:
        ctx.manifest = Manifest.model_validate(to_plain(doc.data))
    except ValidationError as exc:
        yield from _schema_findings(ctx, exc)
    yield from _name(ctx)
    yield from _layout(ctx)
    if ctx.manifest is not None and ctx.manifest.validation is not None:
        for keys, message in policy_violations(ctx.manifest.validation):
            yield VALIDATION_POLICY.finding(
                f"`validation.{'.'.join(keys)}`: {message} (OpenEnv's severity policy).",
                location=ctx.manifest_loc("validation", *keys),
            )


def _typos(ctx: StaticContext) -> Iterator[Finding]:
    data = ctx.manifest_data
    for key in data:
        if not isinstance(key, str) or key in KNOWN_TOP_LEVEL:
            continue
        close = difflib.get_close_matches(key, KNOWN_TOP_LEVEL, n=1, cutoff=0.75)
        if close and close[0] not in data:
            yield MANIFEST_UNKNOWN_KEY.finding(
                f"Top-level key `{key}` is unknown; did you mean `{close[0]}`? As written it "
                "is ignored.",
                location=ctx.manifest_loc(key),
                fix=f"Rename `{key}` to `{close[0]}`.",
            )


def _layout(ctx: StaticContext) -> Iterator[Finding]:
    """EK111, EK115, EK119, EK120, EK123: where envkit's and OpenEnv's facts sit (read from
    the raw YAML, so they are reported even when a value is invalid)."""
    data = ctx.manifest_data
    raw = data.get("validation")
    if raw is not None and not isinstance(raw, dict):
        return  # a schema error (EK103) already says so
    block, legacy = split_validation(raw)
    if legacy:
        keys = ", ".join(f"`{k}`" for k in legacy)
        first = next(iter(legacy))
        if isinstance(data.get("envkit"), dict):
            yield ENVKIT_TWICE.finding(
                f"envkit's keys must be declared once, in `envkit:`; {keys} are also directly "
                "under `validation:`, where envkit now ignores them.",
                location=ctx.manifest_loc("validation", first),
            )
        else:
            yield VALIDATION_LEGACY.finding(
                f"envkit's keys belong in a top-level `envkit:` section (OpenEnv 0.10 owns "
                f"`validation:`); found {keys} directly under `validation:`. They are still "
                "read, for now"
                + (
                    ""
                    if block is not None
                    else ", but without RFC 008's sections `openenv validate` FAILs this manifest"
                )
                + ".",
                location=ctx.manifest_loc("validation", first),
            )
    if block is None:
        if not legacy:
            yield VALIDATION_MISSING.finding(
                "`openenv.yaml` should declare OpenEnv's RFC 008 `validation:` block "
                "(`reward`, `resources`, `capabilities`, `types`); it has "
                + ("an empty one" if isinstance(raw, dict) else "none")
                + ", so `openenv validate` 0.10 FAILs `static.manifest`. envkit uses its "
                "defaults (reward range [0, 1]).",
                location=ctx.manifest_loc("validation")
                if raw is not None
                else Location(MANIFEST_NAME, 1, 1),
            )
        ctx.skip([VALIDATION_NO_EXECUTION.code], "no RFC 008 `validation:` block")
        return
    for key in block:
        if key in RFC008_KEYS or not isinstance(key, str):
            continue
        close = difflib.get_close_matches(key, RFC008_KEYS, n=1, cutoff=0.6)
        hint = (
            f"did you mean `{close[0]}`?"
            if close
            else f"OpenEnv reads only {', '.join(f'`{k}`' for k in RFC008_KEYS)}."
        )
        yield VALIDATION_IGNORED.finding(
            f"`validation.{key}` is not an RFC 008 section, so OpenEnv ignores it; {hint}",
            location=ctx.manifest_loc("validation", key),
            fix=f"Rename `{key}` to `{close[0]}`." if close and close[0] not in block else None,
        )
    if "execution" not in block:
        yield VALIDATION_NO_EXECUTION.finding(
            "`validation.execution` should name the Dockerfile and the runtime probe plan "
            "(manifest schema 2); it is missing, so `openenv validate --level runtime` skips "
            "every runtime check.",
            location=ctx.manifest_loc("validation"),
        )


_RULE_BY_TYPE = {"judge_pin": VALIDATION_JUDGE, "allowlist": VALIDATION_ALLOWLIST}


def _schema_findings(ctx: StaticContext, exc: Any) -> Iterator[Finding]:
    doc = ctx.manifest_doc
    for err in exc.errors():
        raw_loc = tuple(err.get("loc", ()))
        loc = user_loc(err)
        head = raw_loc[0] if raw_loc else ""
        etype = err.get("type")
        dotted = ".".join(str(p) for p in loc) or "(top level)"
        msg = err.get("msg", "invalid value")
        msg = msg.removeprefix("Value error, ")
        value = err.get("input")
        shown = (
            ""
            if etype in ("missing", "extra_forbidden") or isinstance(value, dict)
            else f"; got {value!r}"
        )
        where = doc.locate(loc)
        rfc = head == "validation" and len(loc) > 1 and loc[1] in RFC008_KEYS
        if rfc and etype == "missing":
            yield VALIDATION_REQUIRED.finding(
                f"`{dotted}` is required by RFC 008 (OpenEnv 0.10's manifest) but missing.",
                location=where,
            )
        elif rfc and etype == "extra_forbidden":
            yield from _extra(err, loc, dotted, where)
        elif rfc and etype in _RULE_BY_TYPE:
            yield _RULE_BY_TYPE[etype].finding(f"`{dotted}`: {msg}.", location=where)
        elif rfc:
            yield VALIDATION_VALUE.finding(f"`{dotted}`: {msg}{shown}.", location=where)
        elif etype == "missing":
            yield MANIFEST_SCHEMA.finding(f"`{dotted}` is required but missing.", location=where)
        elif head == "name":
            yield MANIFEST_NAME_RULE.finding(f"`name`: {msg}{shown}.", location=where)
        elif head == "app":
            yield MANIFEST_APP_FORM.finding(
                f"`app` must be of the form `module.path:attribute`, e.g. `server.app:app`{shown}.",
                location=where,
            )
        elif head == "port":
            yield MANIFEST_PORT.finding(
                f"`port` must be an integer in 1..65535{shown}.", location=where
            )
        elif head in ("envkit", "legacy") and etype == "extra_forbidden":
            key = str(loc[-1])
            close = difflib.get_close_matches(key, ENVKIT_KEYS, n=1, cutoff=0.6)
            hint = (
                f"; did you mean `{close[0]}`?"
                if close
                else f"; known keys: {', '.join(ENVKIT_KEYS)}."
            )
            yield MANIFEST_UNKNOWN_KEY.finding(
                f"`{dotted}` is not a known key of envkit's section `envkit:`{hint} As "
                "written it is ignored.",
                location=where,
                fix=f"Rename `{key}` to `{close[0]}`." if close else None,
            )
        elif head in ("envkit", "legacy"):
            yield MANIFEST_VALIDATION.finding(f"`{dotted}`: {msg}{shown}.", location=where)
        else:
            yield MANIFEST_SCHEMA.finding(f"`{dotted}`: {msg}{shown}.", location=where)


def _extra(err: Any, loc: tuple[Any, ...], dotted: str, where: Location) -> Iterator[Finding]:
    """EK114 with the closest field of the section as a suggestion."""
    sections = {
        "reward": RewardDeclaration,
        "judge": JudgePin,
        "resources": ResourceDeclaration,
        "task_distribution": TaskDistributionPin,
        "network": NetworkPolicy,
        "capabilities": CapabilitiesSpec,
        "types": TypeSpec,
        "execution": ExecutionDeclaration,
    }
    model: Any = sections.get(str(loc[1]))
    for part in loc[2:-1]:  # nested sections (capabilities.verifier, capabilities.oracle)
        sub = {
            "verifier": VerifierBinding,
            "oracle": OracleDeclaration,
        }.get(str(part))
        model = sub or model
    key = str(loc[-1])
    fields = list(model.model_fields) if model is not None else []
    close = difflib.get_close_matches(key, fields, n=1, cutoff=0.6)
    hint = f"did you mean `{close[0]}`?" if close else f"known: {', '.join(fields)}."
    yield VALIDATION_EXTRA.finding(
        f"`{dotted}` is not a field of OpenEnv's manifest ({hint}); `openenv validate` rejects it.",
        location=where,
        fix=f"Rename `{key}` to `{close[0]}`." if close else f"Remove `{key}`.",
    )


def _name(ctx: StaticContext) -> Iterator[Finding]:
    name = ctx.manifest_data.get("name")
    if not isinstance(name, str):
        return
    try:
        normalise_name(name)
    except UsageError as exc:
        yield MANIFEST_NAME_RULE.finding(
            f"`name` must be a valid package and Space name: {exc.message}",
            location=ctx.manifest_loc("name"),
            fix=exc.hint or None,
        )


def _defines(tree: ast.Module, attr: str) -> bool:
    """Whether a module binds ``attr`` at its top level (assignment, def, class, import),
    including inside top-level ``try``/``if`` blocks."""

    def scan(body: list[ast.stmt]) -> bool:
        for node in body:
            if (
                isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and node.name == attr
            ):
                return True
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name) and n.id == attr:
                            return True
            if (
                isinstance(node, (ast.AnnAssign, ast.AugAssign))
                and isinstance(node.target, ast.Name)
                and node.target.id == attr
            ):
                return True
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    if (alias.asname or alias.name.split(".")[0]) == attr or alias.name == "*":
                        return True
            if isinstance(node, ast.Try):
                blocks = [node.body, node.orelse, node.finalbody] + [h.body for h in node.handlers]
                if any(scan(b) for b in blocks):
                    return True
            if isinstance(node, (ast.If, ast.With)) and (
                scan(node.body) or scan(getattr(node, "orelse", []))
            ):
                return True
        return False

    return scan(tree.body)


def _target_findings(
    ctx: StaticContext, spec: str, keys: tuple[str, ...], rule: Rule, what: str
) -> Iterator[Finding]:
    module, _, attr = spec.partition(":")
    rel = ctx.module_file(module)
    where = ctx.manifest_loc(*keys)
    if rel is None:
        expected = module.replace(".", "/") + ".py"
        yield rule.finding(
            f"`{'.'.join(keys)}: {spec}` must name a module in the environment; "
            f"`{expected}` does not exist. Most likely the module was renamed or moved.",
            location=where,
        )
        return
    err = ctx.syntax_error(rel)
    if err is not None:
        yield rule.finding(
            f"`{rel}` (the {what} module) must be valid Python; it has a syntax error at line "
            f"{err.lineno}: {err.msg}.",
            location=Location(rel, err.lineno, err.offset),
            fix=f"Fix the syntax error in `{rel}`.",
        )
        return
    tree = ctx.python(rel)
    if tree is not None and not _defines(tree, attr):
        yield rule.finding(
            f"`{rel}` must define `{attr}` at module level ({what} `{spec}`); it does not.",
            location=where,
        )


def check(ctx: StaticContext) -> Iterator[Finding]:
    """EK106, EK110, EK121, EK122 (the manifest's other findings come from :func:`load`)."""
    if ctx.manifest_doc is None:
        return
    app = ctx.manifest_data.get("app", DEFAULT_APP)
    if isinstance(app, str) and APP_PATTERN.fullmatch(app):
        yield from _target_findings(ctx, app, ("app",), MANIFEST_APP_MISSING, "app")
    else:
        ctx.skip([MANIFEST_APP_MISSING.code], f"`app` is malformed ({MANIFEST_APP_FORM.code})")
    oracle, keys = None, ("envkit", "oracle")
    for section in ("envkit", "validation"):
        value = ctx.manifest_data.get(section)
        if isinstance(value, dict) and isinstance(value.get("oracle"), str):
            oracle, keys = value["oracle"], (section, "oracle")
            break
    if isinstance(oracle, str) and APP_PATTERN.fullmatch(oracle):
        yield from _target_findings(ctx, oracle, keys, MANIFEST_ORACLE_MISSING, "oracle")
    else:
        ctx.skip([MANIFEST_ORACLE_MISSING.code], "no oracle declared")
    execution = _raw_execution(ctx.manifest_data)
    if execution is None:
        ctx.skip([PROBE_PLAN.code, EXECUTION_PATH.code], "no valid `validation.execution`")
        return
    yield from _execution(ctx, execution)


def _raw_execution(data: dict[str, Any]) -> Any:
    """``validation.execution`` parsed on its own (so EK121/EK122 run even when another part
    of the manifest is invalid); ``None`` when absent or itself invalid (EK113 says why)."""
    block = data.get("validation")
    raw = block.get("execution") if isinstance(block, dict) else None
    if not isinstance(raw, dict):
        return None
    try:
        return ExecutionDeclaration.model_validate(to_plain(raw))
    except ValidationError:
        return None


def _execution(ctx: StaticContext, execution: Any) -> Iterator[Finding]:
    root = ctx.root.resolve()
    for key, want_dir in (("dockerfile", False), ("context", True)):
        rel = getattr(execution, key)
        if key == "dockerfile" and PurePosixPath(rel) == PurePosixPath("Dockerfile"):
            continue  # the root Dockerfile: EK301/EK302 report it missing
        target = (root / rel).resolve()
        ok = target.is_relative_to(root) and (target.is_dir() if want_dir else target.is_file())
        if not ok:
            kind = "directory" if want_dir else "file"
            yield EXECUTION_PATH.finding(
                f"`validation.execution.{key}: {rel}` must name a {kind} inside the "
                f"environment; there is none. `openenv validate --level runtime` cannot build "
                "the image.",
                location=ctx.manifest_loc("validation", "execution", key),
            )
    try:
        read_plan(root, execution.probe_path)
    except PlanError as exc:
        where = exc.location or ctx.manifest_loc("validation", "execution", "probe_path")
        yield PROBE_PLAN.finding(
            f"The runtime probe plan `{execution.probe_path}` must follow OpenEnv's plan "
            f"schema 1; {exc.message}",
            location=where,
        )
