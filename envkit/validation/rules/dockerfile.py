"""EK3xx Dockerfile rules, read with ``dockerfile-parse`` (a maintained parser: line
continuations, comments and ``ARG`` substitution in ``FROM`` handled for us).

Facts (docs/protocol.md; Hugging Face Docker Spaces docs): Spaces build only the root Dockerfile
and run the container as uid 1000; docker's SDK and legacy builders reject BuildKit-only
syntax (``RUN --mount``, heredocs, ``# syntax=``); `openenv init` keeps its Dockerfile in
``server/`` and uses a ``:latest`` ghcr base image.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from typing import Any

from envkit.findings import Finding, Location, Severity, register
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

KNOWN_INSTRUCTIONS = frozenset(
    {
        "FROM",
        "RUN",
        "CMD",
        "LABEL",
        "MAINTAINER",
        "EXPOSE",
        "ENV",
        "ADD",
        "COPY",
        "ENTRYPOINT",
        "VOLUME",
        "USER",
        "WORKDIR",
        "ARG",
        "ONBUILD",
        "STOPSIGNAL",
        "HEALTHCHECK",
        "SHELL",
        "COMMENT",
    }
)
_SECRET_NAME = re.compile(
    r"(?:^|_)(?:apikey|api_key|auth|credentials?|key|password|passwd|pass|pwd|secret|token)"
    r"(?:_|$)",
    re.IGNORECASE,
)
_PUBLIC = re.compile(r"(?:^|_)public(?:_|$)", re.IGNORECASE)
_BUILDKIT_FLAGS = {
    "RUN": ("--mount", "--network", "--security"),
    "COPY": ("--link", "--chmod", "--exclude", "--parents"),
    "ADD": ("--link", "--chmod", "--exclude", "--checksum", "--keep-git-dir"),
}
_HEREDOC = re.compile(r"<<-?\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)['\"]?")
_INSTALL = re.compile(
    r"\b(pip3?|uv pip|python -m pip) install\b|\buv sync\b|\bpoetry install\b|"
    r"\bpdm install\b|\bconda (env )?(install|create|update)\b|"
    r"\bnpm (ci|install)\b"
)
_PORT_ARG = re.compile(r"--port(?:=|\s+)[\"']?(\d+)")
_ALL = ("EK303", "EK304", "EK305", "EK306", "EK307", "EK308", "EK309", "EK310")


def _loc(rel: str, entry: dict[str, Any]) -> Location:
    return Location(rel, int(entry["startline"]) + 1, 1)


def _flags(value: str) -> list[str]:
    out = []
    for tok in value.split():
        if not tok.startswith("--"):
            break
        out.append(tok.split("=", 1)[0])
    return out


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
    root_df = ctx.exists("Dockerfile")
    server_df = ctx.exists("server/Dockerfile")
    if not root_df and not server_df:
        ctx.skip(("EK302",) + _ALL, "no Dockerfile")
        yield NO_DOCKERFILE.finding(
            "Expected a `Dockerfile` at the environment root (Docker Spaces build it); found none.",
            location=Location("Dockerfile"),
        )
        return
    rel = "Dockerfile" if root_df else "server/Dockerfile"
    repo = None if root_df else enclosing_repository(ctx.root)
    if repo is not None:
        ctx.skip(
            ("EK302",),
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
    text = ctx.text(rel)
    if text is None:
        ctx.skip(_ALL[1:], "Dockerfile unreadable")
        yield UNPARSEABLE.finding(
            f"`{rel}` must be UTF-8 text; it cannot be read as such.", location=Location(rel)
        )
        return
    import io

    from dockerfile_parse import DockerfileParser

    try:
        parser = DockerfileParser(fileobj=io.BytesIO(text.encode("utf-8")))
        structure = parser.structure
        parents = parser.parent_images
    except Exception as exc:  # noqa: BLE001 - the parser's own failure is the finding
        ctx.skip(_ALL[1:], "Dockerfile unparseable")
        yield UNPARSEABLE.finding(f"`{rel}` could not be parsed: {exc}.", location=Location(rel))
        return

    # Drop heredoc bodies (the parser reads their lines as instructions).
    entries: list[dict[str, Any]] = []
    heredoc_end: str | None = None
    for e in structure:
        if heredoc_end is not None:
            if e["content"].strip() == heredoc_end:
                heredoc_end = None
            continue
        entries.append(e)
        if e["instruction"] in ("RUN", "COPY", "ADD"):
            m = _HEREDOC.search(e["value"])
            if m:
                heredoc_end = m.group(1)
                yield BUILDKIT_ONLY.finding(
                    f"`{rel}` should build with any builder; `{e['instruction']} <<{m.group(1)}` "
                    "is a heredoc, which only BuildKit understands.",
                    location=_loc(rel, e),
                )
    for e in entries:
        if e["instruction"] not in KNOWN_INSTRUCTIONS:
            yield UNPARSEABLE.finding(
                f"`{rel}` line {e['startline'] + 1}: `{e['instruction']}` is not a Dockerfile "
                "instruction.",
                location=_loc(rel, e),
            )
    if re.match(r"\s*#\s*syntax\s*=", text):
        yield BUILDKIT_ONLY.finding(
            f"`{rel}` should build with any builder; its `# syntax=` directive asks for a "
            "BuildKit frontend.",
            location=Location(rel, 1, 1),
        )

    instrs = [e for e in entries if e["instruction"] != "COMMENT"]
    froms = [e for e in instrs if e["instruction"] == "FROM"]
    first = next((e for e in instrs if e["instruction"] != "ARG"), None)
    if not froms or first is None or first["instruction"] != "FROM":
        ctx.skip(("EK305", "EK308"), "no FROM")
        where = _loc(rel, first) if first else Location(rel, 1)
        got = "it has no FROM" if not froms else f"the first instruction is {first['instruction']}"
        yield NO_FROM.finding(
            f"`{rel}` must start with `FROM <base image>` (after optional `ARG`s); {got}.",
            location=where,
        )
    else:
        stages: set[str] = set()
        for e, image in zip(froms, parents + [None] * (len(froms) - len(parents))):
            parts = e["value"].split()
            parts = [p for p in parts if not p.startswith("--")]
            raw = parts[0] if parts else ""
            if len(parts) >= 3 and parts[1].lower() == "as":
                stages.add(parts[2].lower())
            image = image or raw
            if (
                raw.lower() in stages
                or image.lower() in stages
                or image == "scratch"
                or "$" in image
            ):
                continue
            name, tag, digest = _split_image(image)
            if digest or (tag and tag != "latest"):
                continue
            yield UNPINNED_BASE.finding(
                f"`FROM {raw}` should pin a version; the base image "
                f"`{name}` {'is `:latest`' if tag else 'has no tag (= `:latest`)'}, which "
                "changes under you.",
                location=_loc(rel, e),
            )
        yield from _user(ctx, rel, instrs, froms)

    for e in instrs:
        ins = e["instruction"]
        for flag in _flags(e["value"]):
            if flag in _BUILDKIT_FLAGS.get(ins, ()):
                yield BUILDKIT_ONLY.finding(
                    f"`{rel}` should build with any builder; `{ins} {flag}` needs BuildKit "
                    "(docker's SDK and legacy builders fail with "
                    f"'the {flag} option requires BuildKit').",
                    location=_loc(rel, e),
                )
                break
    yield from _ports(ctx, rel, instrs)
    yield from _secrets(rel, instrs)
    yield from _copy_order(rel, instrs)


def _user(ctx: StaticContext, rel: str, instrs: list[dict], froms: list[dict]) -> Iterator[Finding]:
    last_from = froms[-1]
    users = [
        e for e in instrs if e["instruction"] == "USER" and e["startline"] > last_from["startline"]
    ]
    if not users:
        yield RUNS_AS_ROOT.finding(
            "The final stage should run as a non-root user (Spaces use uid 1000); it has no "
            "`USER`, so it runs as root.",
            location=_loc(rel, last_from),
        )
        return
    user = users[-1]["value"].strip().split(":")[0]
    if user in ("root", "0"):
        yield RUNS_AS_ROOT.finding(
            f"The final stage should run as a non-root user (Spaces use uid 1000); it ends "
            f"with `USER {users[-1]['value'].strip()}`.",
            location=_loc(rel, users[-1]),
        )


def _command_words(value: str) -> str:
    value = value.strip()
    if value.startswith("["):
        try:
            return " ".join(str(x) for x in json.loads(value))
        except ValueError:
            pass
    return value


def _ports(ctx: StaticContext, rel: str, instrs: list[dict]) -> Iterator[Finding]:
    port = ctx.port
    # Every `EXPOSE` line counts (`EXPOSE 8000` then `EXPOSE 2000`, as carla_env does, exposes
    # both: docs/realworld.md); one finding, at the first, when none has the port.
    exposed: list[int] = []
    first_expose = None
    for e in instrs:
        if e["instruction"] == "EXPOSE":
            for tok in e["value"].split():
                num = tok.split("/")[0]
                if num.isdigit():
                    if first_expose is None:
                        first_expose = e
                    exposed.append(int(num))
    if first_expose is not None and port not in exposed:
        yield PORT_MISMATCH.finding(
            f"`EXPOSE` should include the manifest port {port}; got "
            f"{', '.join(map(str, dict.fromkeys(exposed)))}.",
            location=_loc(rel, first_expose),
        )
    for e in instrs:
        if e["instruction"] in ("CMD", "ENTRYPOINT"):
            words = _command_words(e["value"])
            for m in _PORT_ARG.finditer(words):
                if int(m.group(1)) != port:
                    yield PORT_MISMATCH.finding(
                        f"`{e['instruction']}` should serve on the manifest port {port}; it "
                        f"passes `--port {m.group(1)}`, so the Space's `app_port` never "
                        "answers.",
                        location=_loc(rel, e),
                    )
                    break


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


def _secrets(rel: str, instrs: list[dict]) -> Iterator[Finding]:
    from envkit.secret_scan import looks_secret

    for e in instrs:
        ins = e["instruction"]
        if ins not in ("ENV", "ARG"):
            continue
        for key, val in _pairs(ins, e["value"]):
            kind = looks_secret(val) if val else None
            if kind:
                yield SECRET_IN_IMAGE.finding(
                    f"`{ins} {key}` must not hold a credential; its value contains a {kind} "
                    "(value not shown), which is stored in the image for anyone who pulls it.",
                    location=_loc(rel, e),
                )
            elif _SECRET_NAME.search(key) and not _PUBLIC.search(key):
                yield SECRET_IN_IMAGE.finding(
                    f"`{ins} {key}` looks like a credential; build arguments and environment "
                    "variables are stored in the image's history and config, readable by "
                    "anyone who pulls it.",
                    location=_loc(rel, e),
                )


def _copy_order(rel: str, instrs: list[dict]) -> Iterator[Finding]:
    copy_all: dict | None = None
    for e in instrs:
        ins = e["instruction"]
        if ins == "FROM":
            copy_all = None
        elif ins in ("COPY", "ADD") and copy_all is None:
            srcs = [t for t in e["value"].split() if not t.startswith("--")][:-1]
            if any(s.rstrip("/") in (".", "./", "") or s in ("./", ".") for s in srcs):
                copy_all = e
        elif ins == "RUN" and copy_all is not None and _INSTALL.search(e["value"]):
            yield COPY_BEFORE_INSTALL.finding(
                f"Dependencies should be installed before the whole context is copied; "
                f"`{copy_all['content'].strip()}` (line {copy_all['startline'] + 1}) comes "
                "before the install, so any code edit re-installs every dependency.",
                location=_loc(rel, copy_all),
            )
            copy_all = None
            return
