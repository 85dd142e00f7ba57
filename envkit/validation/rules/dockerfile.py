"""EK3xx Dockerfile rules, asked of the one Dockerfile parser
(:func:`envkit.container.dockerfile.parse`: line continuations, comments, heredoc bodies,
``ARG`` substitution in ``FROM`` and bounded port numbers handled there).

Facts (docs/protocol.md; Hugging Face Docker Spaces docs): Spaces build only the root Dockerfile
and run the container as uid 1000; docker's SDK and legacy builders reject BuildKit-only
syntax (``RUN --mount``, heredocs, ``# syntax=``); `openenv init` keeps its Dockerfile in
``server/`` and uses a ``:latest`` ghcr base image.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Generator, Iterator

from envkit.envdir.dockerfile import (
    Instruction,
    ParsedDockerfile,
    parse,
    port_number,
    shown,
)
from envkit.findings import Finding, Location, Severity, register
from envkit.secret_scan import looks_secret
from envkit.validation.context import StaticContext
from envkit.validation.rules.deploy import enclosing_repository

NO_DOCKERFILE = register(
    "EK301",
    "dockerfile-missing",
    Severity.ERROR,
    rfc008="static.reproducible_build",
    summary="There is no Dockerfile.",
    what="The environment has a `Dockerfile` at its root (or at least in `server/`).",
    why="A Docker Space, `envkit build` and `from_docker_image()` all need one.",
    example="An environment with only `requirements.txt` and `server/`.",
    fix="Add a Dockerfile (`envkit init` writes one that builds everywhere).",
)
SERVER_ONLY = register(
    "EK302",
    "dockerfile-not-at-root",
    Severity.WARNING,
    rfc008="static.layout",
    hygiene=True,
    summary="The Dockerfile is only in `server/`.",
    what="The Dockerfile is at the root of the environment, not only in `server/`.",
    why="Hugging Face Spaces build only the root Dockerfile. OpenEnv's in-repo environments "
    "keep it in `server/` and `envkit push` moves it to the root in its staged copy, but "
    "a plain upload or `docker build .` finds none.",
    example="`server/Dockerfile` from `openenv init`.",
    fix="Move it to the root (`git mv server/Dockerfile Dockerfile`) and fix `COPY` paths.",
)
UNPARSEABLE = register(
    "EK303",
    "dockerfile-unparseable",
    Severity.ERROR,
    rfc008="static.reproducible_build",
    summary="The Dockerfile cannot be read or has an unknown instruction.",
    what="The Dockerfile is UTF-8 text and every instruction is one Docker knows.",
    why="`docker build` stops at the first unknown instruction, after sending the context.",
    example="`FORM python:3.11-slim` (a typo of `FROM`).",
    fix="Correct the instruction at the reported line.",
)
NO_FROM = register(
    "EK304",
    "dockerfile-no-from",
    Severity.ERROR,
    rfc008="static.reproducible_build",
    summary="The Dockerfile has no `FROM`.",
    what="The Dockerfile's first instruction (after `ARG`s and comments) is `FROM`.",
    why="Docker refuses to build without a base image.",
    example="A Dockerfile starting with `RUN pip install ...`.",
    fix="Start with `FROM python:3.11-slim` (pin the tag).",
)
UNPINNED_BASE = register(
    "EK305",
    "base-image-unpinned",
    Severity.WARNING,
    rfc008="static.reproducible_build",
    hygiene=True,
    summary="A base image uses `latest` or no tag.",
    what="Every `FROM` image (after `ARG` defaults are substituted) has an explicit tag other "
    "than `latest`, or a digest.",
    why="`latest` moves: the same Dockerfile builds a different environment next month, and "
    "rewards stop being comparable across runs.",
    example="`FROM ghcr.io/meta-pytorch/openenv-base:latest` or `FROM python`.",
    fix="Pin a version tag (`python:3.11-slim`) or a digest (`image@sha256:...`).",
)
BUILDKIT_ONLY = register(
    "EK306",
    "buildkit-only-syntax",
    Severity.WARNING,
    rfc008="static.reproducible_build",
    hygiene=True,
    summary="The Dockerfile needs BuildKit (`RUN --mount`, heredocs, `# syntax=`, ...).",
    what="No BuildKit-only syntax: `# syntax=` directives, `RUN --mount/--network/--security`, "
    "`COPY/ADD --link/--chmod/--exclude/--parents/--checksum`, heredocs (`<<EOF`).",
    why="docker's Python SDK (what `envkit build` uses), legacy builders and some CI runners "
    "cannot build it: `the --mount option requires BuildKit`.",
    example="`RUN --mount=type=cache,target=/root/.cache/uv uv sync` from `openenv init`.",
    fix="Drop the flag (`RUN uv sync --no-cache`), or accept that only BuildKit builds it.",
)
PORT_MISMATCH = register(
    "EK307",
    "dockerfile-port-mismatch",
    Severity.ERROR,
    rfc008="runtime.startup",
    summary="`EXPOSE` or the server command's `--port` differs from the manifest port.",
    what="An `EXPOSE` line includes the manifest's `port`, and a `--port N` in "
    "`CMD`/`ENTRYPOINT` equals it.",
    why="The Space card routes to `app_port` (= the manifest port); a server on another port "
    "never answers and the Space shows 'starting' forever.",
    example='`port: 8000` in openenv.yaml with `CMD ["uvicorn", ..., "--port", "7860"]`.',
    fix="Use the manifest port in `EXPOSE` and `CMD`, or change the manifest.",
)
RUNS_AS_ROOT = register(
    "EK308",
    "dockerfile-runs-as-root",
    Severity.WARNING,
    rfc008="static.image_hygiene",
    hygiene=True,
    summary="The image runs as root (no `USER` in the final stage).",
    what="The final stage sets `USER` to a non-root user.",
    why="Spaces run containers as uid 1000: files created as root during the build are then "
    "unwritable, and caches under /root are unreadable.",
    example="A Dockerfile without `USER`.",
    fix="Add `RUN useradd --create-home --uid 1000 user` and `USER 1000` before `CMD`.",
)
SECRET_IN_IMAGE = register(
    "EK309",
    "dockerfile-secret",
    Severity.ERROR,
    rfc008="static.image_hygiene",
    summary="A secret is passed through `ENV` or `ARG`.",
    what="No `ENV` or `ARG` name looks like a credential (`*_TOKEN`, `*_KEY`, `PASSWORD`, "
    "`SECRET`, ... as docker's SecretsUsedInArgOrEnv check) and no value contains a "
    "token.",
    why="`ENV` and `ARG` values are stored in the image's history and config: anyone who "
    "pulls the image (everyone, for a public Space) can read them.",
    example="`ENV HF_TOKEN=hf_...` or `ARG OPENAI_API_KEY`.",
    fix="Remove it; set secrets as Space secrets (runtime environment variables) instead.",
)
COPY_BEFORE_INSTALL = register(
    "EK310",
    "dockerfile-copy-before-install",
    Severity.INFO,
    rfc008="static.image_hygiene",
    hygiene=True,
    summary="`COPY . ` comes before the dependency install (every code edit reinstalls).",
    what="Dependencies are installed from `pyproject.toml`/`uv.lock` before the whole "
    "context is copied.",
    why="`COPY .` invalidates the cache on any file change, so every edit re-downloads every "
    "dependency (minutes per build).",
    example="`COPY . /app` then `RUN uv sync`.",
    fix="`COPY pyproject.toml uv.lock ./`, install, then `COPY . /app`.",
)

_SECRET_NAME = re.compile(
    r"(?:^|_)(?:apikey|api_key|auth|credentials?|key|password|passwd|pass|pwd|secret|token)"
    r"(?:_|$)",
    re.IGNORECASE,
)
_PUBLIC = re.compile(r"(?:^|_)public(?:_|$)", re.IGNORECASE)
_INSTALL = re.compile(
    r"\b(pip3?|uv pip|python -m pip) install\b|\buv sync\b|\bpoetry install\b|"
    r"\bpdm install\b|\bconda (env )?(install|create|update)\b|"
    r"\bnpm (ci|install)\b"
)
_PORT_ARG = re.compile(r"--port(?:=|\s+)[\"']?(\d+)")
# `--host 127.0.0.1` (uvicorn, the templates' `server.app` main), `--bind localhost:8000` /
# `-b [::1]:8000` (gunicorn, hypercorn): an address only the container itself can reach.
_LOOPBACK_ARG = re.compile(
    r"(?:--host|--bind|-b)(?:=|\s+)[\"']?(127(?:\.\d{1,3}){3}|localhost|\[?::1\]?)(?![\w.-])",
    re.IGNORECASE,
)
LOOPBACK_BIND = register(
    "EK311",
    "dockerfile-server-on-loopback",
    Severity.ERROR,
    rfc008="runtime.startup",
    summary="The image's server command binds a loopback address (`--host 127.0.0.1`).",
    what="The final stage's `CMD`/`ENTRYPOINT` does not bind the server to a loopback address "
    "(`127.0.0.1`, `localhost`, `::1`) with `--host`, `--bind` or `-b`.",
    why="Inside a container, loopback is the container's own: Docker's port mapping and the "
    "Space's router reach the container through its network interface, so a server on "
    "127.0.0.1 never answers and the Space shows 'starting' until it times out. It works "
    "under `envkit run`, which is why it ships.",
    example='`CMD ["uvicorn", "server.app:app", "--host", "127.0.0.1", "--port", "8000"]`.',
    fix="Bind every interface in the image: `--host 0.0.0.0` (or `--bind 0.0.0.0:8000`).",
)

# every rule reading the parsed Dockerfile (the first, EK303, is the parse itself)
_ALL = tuple(
    rule.code
    for rule in (
        UNPARSEABLE,
        NO_FROM,
        UNPINNED_BASE,
        BUILDKIT_ONLY,
        PORT_MISMATCH,
        RUNS_AS_ROOT,
        SECRET_IN_IMAGE,
        COPY_BEFORE_INSTALL,
        LOOPBACK_BIND,
    )
)


def _loc(rel: str, ins: Instruction) -> Location:
    return Location(rel, ins.line, 1)


def _split_image(image: str) -> tuple[str, str | None, bool]:
    """(name, tag or None, has digest)."""
    if "@" in image:
        return image.split("@", 1)[0], None, True
    name, tag = image, None
    last = image.rsplit("/", 1)[-1]
    if ":" in last:
        name, tag = image.rsplit(":", 1)
    return name, tag, False


def check(ctx: StaticContext) -> Iterator[Finding]:
    """Every EK30x finding of the environment's Dockerfile, in a stable order: where it is
    (EK301/EK302), whether it reads and parses (EK303), then one concern per function."""
    rel = yield from _where(ctx)
    if rel is None:
        return
    parsed = yield from _parsed(ctx, rel)
    if parsed is None:
        return
    yield from _heredocs(rel, parsed)
    yield from _unknown(rel, parsed)
    yield from _syntax(rel, parsed)
    if (yield from _no_from(ctx, rel, parsed)):
        yield from _unpinned(rel, parsed)
        yield from _user(rel, parsed)
    yield from _flags(rel, parsed)
    yield from _ports(ctx, rel, parsed)
    yield from _loopback(rel, parsed)
    yield from _secrets(rel, parsed)
    yield from _copy_order(rel, parsed)


def _where(ctx: StaticContext) -> Generator[Finding, None, str | None]:
    """EK301 (no Dockerfile) and EK302 (only ``server/Dockerfile``); returns the relative
    path of the Dockerfile to check, ``None`` when there is none."""
    root_df = ctx.exists("Dockerfile")
    server_df = ctx.exists("server/Dockerfile")
    if not root_df and not server_df:
        ctx.skip((SERVER_ONLY.code, *_ALL), "no Dockerfile")
        yield NO_DOCKERFILE.finding(
            "Expected a `Dockerfile` at the environment root (Docker Spaces build it); found none.",
            location=Location("Dockerfile"),
        )
        return None
    rel = "Dockerfile" if root_df else "server/Dockerfile"
    repo = None if root_df else enclosing_repository(ctx.root)
    if repo is not None:
        ctx.skip(
            (SERVER_ONLY.code,),
            "in-repo environment (repository at "
            f"`{repo.rel(ctx.root, repo.top)}`): OpenEnv's `envs/NAME` layout keeps the "
            "Dockerfile in `server/`; `envkit push` moves it to the root of its staged copy",
        )
    elif not root_df:
        yield SERVER_ONLY.finding(
            "Expected the `Dockerfile` at the environment root, where Spaces look for it; "
            "found only `server/Dockerfile`. `envkit push` moves it in its staged copy.",
            location=Location(rel),
        )
    return rel


def _parsed(ctx: StaticContext, rel: str) -> Generator[Finding, None, ParsedDockerfile | None]:
    """EK303 when the Dockerfile is not UTF-8 or does not tokenise; else the shared parse."""
    text = ctx.text(rel)
    if text is None:
        ctx.skip(_ALL[1:], "Dockerfile unreadable")
        yield UNPARSEABLE.finding(
            f"`{rel}` must be UTF-8 text; it cannot be read as such.", location=Location(rel)
        )
        return None
    parsed = parse(text)
    if parsed.error is not None:
        ctx.skip(_ALL[1:], "Dockerfile unparseable")
        yield UNPARSEABLE.finding(
            f"`{rel}` could not be parsed: {parsed.error}.", location=Location(rel)
        )
        return None
    return parsed


def _heredocs(rel: str, parsed: ParsedDockerfile) -> Iterator[Finding]:
    for ins in parsed.instructions:
        if ins.heredoc is not None:
            yield BUILDKIT_ONLY.finding(
                f"`{rel}` should build with any builder; `{ins.name} <<{ins.heredoc}` "
                "is a heredoc, which only BuildKit understands.",
                location=_loc(rel, ins),
            )


def _unknown(rel: str, parsed: ParsedDockerfile) -> Iterator[Finding]:
    for ins in parsed.unknown:
        yield UNPARSEABLE.finding(
            f"`{rel}` line {ins.line}: `{ins.name}` is not a Dockerfile instruction.",
            location=_loc(rel, ins),
        )


def _syntax(rel: str, parsed: ParsedDockerfile) -> Iterator[Finding]:
    if parsed.syntax_line is not None:
        yield BUILDKIT_ONLY.finding(
            f"`{rel}` should build with any builder; its `# syntax=` directive asks for a "
            "BuildKit frontend.",
            location=Location(rel, parsed.syntax_line, 1),
        )


def _no_from(
    ctx: StaticContext, rel: str, parsed: ParsedDockerfile
) -> Generator[Finding, None, bool]:
    """EK304 when the first instruction (after ``ARG``s) is not ``FROM``; returns whether
    the stage rules (EK305, EK308) can run."""
    first = parsed.first_non_arg
    if parsed.stages and first is not None and first.name == "FROM":
        return True
    ctx.skip((UNPINNED_BASE.code, RUNS_AS_ROOT.code), "no FROM")
    where = _loc(rel, first) if first else Location(rel, 1)
    got = "it has no FROM" if not parsed.stages else f"the first instruction is {first.name}"  # type: ignore[union-attr]
    yield NO_FROM.finding(
        f"`{rel}` must start with `FROM <base image>` (after optional `ARG`s); {got}.",
        location=where,
    )
    return False


def _unpinned(rel: str, parsed: ParsedDockerfile) -> Iterator[Finding]:
    aliases: set[str] = set()
    for stage in parsed.stages:
        raw, image = stage.image, stage.resolved
        if stage.name is not None:
            aliases.add(stage.name)
        if raw.lower() in aliases or image.lower() in aliases or image == "scratch" or "$" in image:
            continue
        name, tag, digest = _split_image(image)
        if digest or (tag and tag != "latest"):
            continue
        yield UNPINNED_BASE.finding(
            f"`FROM {raw}` should pin a version; the base image "
            f"`{name}` {'is `:latest`' if tag else 'has no tag (= `:latest`)'}, which "
            "changes under you.",
            location=_loc(rel, stage.from_),
        )


def _user(rel: str, parsed: ParsedDockerfile) -> Iterator[Finding]:
    users = parsed.final.users
    if not users:
        yield RUNS_AS_ROOT.finding(
            "The final stage should run as a non-root user (Spaces use uid 1000); it has no "
            "`USER`, so it runs as root.",
            location=_loc(rel, parsed.stages[-1].from_),
        )
        return
    last = users[-1]
    if last.value.strip().split(":")[0] in ("root", "0"):
        yield RUNS_AS_ROOT.finding(
            f"The final stage should run as a non-root user (Spaces use uid 1000); it ends "
            f"with `USER {last.value.strip()}`.",
            location=_loc(rel, last),
        )


def _flags(rel: str, parsed: ParsedDockerfile) -> Iterator[Finding]:
    """EK306 for a BuildKit-only leading flag: one finding per instruction, its first."""
    seen: set[int] = set()
    for feature in parsed.buildkit:
        ins = feature.instruction
        if feature.flag is None or ins is None or id(ins) in seen:
            continue
        seen.add(id(ins))
        yield BUILDKIT_ONLY.finding(
            f"`{rel}` should build with any builder; `{ins.name} {feature.flag}` needs "
            "BuildKit (docker's SDK and legacy builders fail with "
            f"'the {feature.flag} option requires BuildKit').",
            location=_loc(rel, ins),
        )


def _command_words(value: str) -> str:
    value = value.strip()
    if value.startswith("["):
        try:
            return " ".join(str(x) for x in json.loads(value))
        except ValueError:
            pass
    return value


def _ports(ctx: StaticContext, rel: str, parsed: ParsedDockerfile) -> Iterator[Finding]:
    port = ctx.port
    # Every `EXPOSE` line counts (`EXPOSE 8000` then `EXPOSE 2000`, as carla_env does, exposes
    # both: docs/realworld.md); one finding, at the first, when none has the port. A number
    # that is not a port (0, 70000, 4 000 digits) counts as exposed but never matches.
    exposed = parsed.final.expose
    if exposed and port not in {e.port for e in exposed}:
        got = (str(e.port) if e.port is not None else shown(e.text) for e in exposed)
        yield PORT_MISMATCH.finding(
            f"`EXPOSE` should include the manifest port {port}; got "
            f"{', '.join(dict.fromkeys(got))}.",
            location=_loc(rel, exposed[0].instruction),
        )
    for ins in parsed.instructions:
        if ins.name in ("CMD", "ENTRYPOINT"):
            words = _command_words(ins.value)
            for m in _PORT_ARG.finditer(words):
                if port_number(m.group(1)) != port:
                    yield PORT_MISMATCH.finding(
                        f"`{ins.name}` should serve on the manifest port {port}; it "
                        f"passes `--port {shown(m.group(1))}`, so the Space's `app_port` never "
                        "answers.",
                        location=_loc(rel, ins),
                    )
                    break


def _loopback(rel: str, parsed: ParsedDockerfile) -> Iterator[Finding]:
    """EK311: a ``CMD``/``ENTRYPOINT`` of the final stage (the one the container runs) that
    binds the server to loopback; one finding per instruction."""
    if not parsed.stages:
        return
    for ins in parsed.stages[-1].instructions:
        if ins.name not in ("CMD", "ENTRYPOINT"):
            continue
        m = _LOOPBACK_ARG.search(_command_words(ins.value))
        if m is not None:
            yield LOOPBACK_BIND.finding(
                f"`{ins.name}` should bind the server to every interface (`0.0.0.0`); it "
                f"binds `{shown(m.group(1))}`, which only the container itself can reach, so "
                "the Space's router and `docker run -p` never get an answer.",
                location=_loc(rel, ins),
            )


def _pairs(ins: str, value: str) -> list[tuple[str, str | None]]:
    try:
        tokens = shlex.split(value, posix=True)
    except ValueError:
        tokens = value.split()
    if not tokens:
        return []
    if ins == "ENV" and "=" not in tokens[0]:
        return [(tokens[0], " ".join(tokens[1:]))]
    out = []
    for tok in tokens:
        key, sep, val = tok.partition("=")
        out.append((key, val if sep else None))
    return out


def _secrets(rel: str, parsed: ParsedDockerfile) -> Iterator[Finding]:
    for ins in parsed.instructions:
        if ins.name not in ("ENV", "ARG"):
            continue
        for key, val in _pairs(ins.name, ins.value):
            kind = looks_secret(val) if val else None
            if kind:
                yield SECRET_IN_IMAGE.finding(
                    f"`{ins.name} {key}` must not hold a credential; its value contains a "
                    f"{kind} (value not shown), which is stored in the image for anyone who "
                    "pulls it.",
                    location=_loc(rel, ins),
                )
            elif _SECRET_NAME.search(key) and not _PUBLIC.search(key):
                yield SECRET_IN_IMAGE.finding(
                    f"`{ins.name} {key}` looks like a credential; build arguments and "
                    "environment variables are stored in the image's history and config, "
                    "readable by anyone who pulls it.",
                    location=_loc(rel, ins),
                )


def _copy_order(rel: str, parsed: ParsedDockerfile) -> Iterator[Finding]:
    copy_all: Instruction | None = None
    for ins in parsed.instructions:
        if ins.name == "FROM":
            copy_all = None
        elif ins.name in ("COPY", "ADD") and copy_all is None:
            srcs = [t for t in ins.value.split() if not t.startswith("--")][:-1]
            if any(s.rstrip("/") in (".", "./", "") or s in ("./", ".") for s in srcs):
                copy_all = ins
        elif ins.name == "RUN" and copy_all is not None and _INSTALL.search(ins.value):
            yield COPY_BEFORE_INSTALL.finding(
                f"Dependencies should be installed before the whole context is copied; "
                f"`{copy_all.content.strip()}` (line {copy_all.line}) comes "
                "before the install, so any code edit re-installs every dependency.",
                location=_loc(rel, copy_all),
            )
            return
