"""One fixture environment per static rule: the clean echo environment with ONE thing changed
must produce exactly that rule's finding(s), and the clean one none at all."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from envkit.findings import RULES, Severity, Stage, codes_of
from envkit.validation import validate

# A syntactically valid but fake Hugging Face token, built at run time so no scanner flags
# this test file itself.
FAKE_HF_TOKEN = "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567"


def edit(rel: str, old: str, new: str, count: int = 1) -> Callable[[Path], None]:
    def _apply(root: Path) -> None:
        path = root / rel
        text = path.read_text()
        assert old in text, f"fixture drift: {old!r} not in {rel}"
        path.write_text(text.replace(old, new, count))

    return _apply


def append(rel: str, extra: str) -> Callable[[Path], None]:
    def _apply(root: Path) -> None:
        with (root / rel).open("a") as fh:
            fh.write(extra)

    return _apply


def delete(rel: str) -> Callable[[Path], None]:
    return lambda root: (root / rel).unlink()


def write(rel: str, text: str) -> Callable[[Path], None]:
    return lambda root: (root / rel).write_text(text)


def move(src: str, dst: str) -> Callable[[Path], None]:
    return lambda root: (root / src).rename(root / dst)


def big_file(root: Path) -> None:
    with (root / "episodes.bin").open("wb") as fh:  # sparse: instant, 11 MB
        fh.truncate(11 * 1024 * 1024)


def huge_file(root: Path) -> None:
    with (root / "episodes.bin").open("wb") as fh:  # sparse: over the secret scanner's 16 MiB
        fh.truncate(17 * 1024 * 1024)


def latin1_name(root: Path) -> None:
    with open(os.path.join(os.fsencode(root), b"r\xe9sum\xe9.txt"), "wb") as fh:
        fh.write(b"notes")


def link_outside(rel: str) -> Callable[[Path], None]:
    def _apply(root: Path) -> None:
        outside = root.parent / "outside.py"
        outside.write_text("X = 1\n")
        (root / rel).symlink_to(outside)

    return _apply


def both(*steps: Callable[[Path], None]) -> Callable[[Path], None]:
    def _apply(root: Path) -> None:
        for step in steps:
            step(root)

    return _apply


EXECUTION = (
    "  execution:\n    kind: openenv_ws\n    probe_path: validation/runtime.json\n"
    "    dockerfile: Dockerfile\n    context: .\n"
)
ENVKIT_SECTION = "envkit:\n  oracle: server.oracle:policy\n  max_steps: 5\n  seeds: [0, 1, 2]\n"
VALIDATION_BLOCK = (
    "validation:\n  reward:\n    range: [0.0, 1.0]\n    oracle_tolerance: 0.0\n"
    "    floor_margin: 0.1\n  resources:\n    cpu: 1\n    memory_mb: 1024\n"
    "    disk_mb: 1024\n    episode_timeout_s: 60\n  capabilities:\n"
    "    verifier: {kind: reward_channel}\n  types:\n    tags: [echo]\n"
    "  network:\n    mode: no-network\n" + EXECUTION
)

# code -> (mutation, expected (file, line) of the first finding or None to skip the check)
CASES: dict[str, tuple[Callable[[Path], None], tuple[str, int | None] | None]] = {
    "EK101": (delete("openenv.yaml"), ("openenv.yaml", None)),
    "EK102": (write("openenv.yaml", "name: echo_env\nport 8000\napp: [\n"), ("openenv.yaml", 3)),
    "EK103": (append("openenv.yaml", "variables: [A, B]\n"), ("openenv.yaml", 40)),
    "EK104": (edit("openenv.yaml", 'name: "echo_env"', "name: server"), ("openenv.yaml", 2)),
    "EK105": (
        edit("openenv.yaml", "app: server.app:app", "app: server/app.py"),
        ("openenv.yaml", 6),
    ),
    "EK106": (
        edit("openenv.yaml", "app: server.app:app", "app: server.app:application"),
        ("openenv.yaml", 6),
    ),
    "EK107": (edit("openenv.yaml", "port: 8000", "port: 80000"), ("openenv.yaml", 7)),
    "EK108": (edit("openenv.yaml", "max_steps: 5", "max_steps: 0"), ("openenv.yaml", 37)),
    "EK109": (edit("openenv.yaml", "max_steps:", "max_step:"), ("openenv.yaml", 37)),
    "EK110": (
        edit("openenv.yaml", "server.oracle:policy", "server.oracle:solve"),
        ("openenv.yaml", 36),
    ),
    "EK111": (edit("openenv.yaml", VALIDATION_BLOCK, ""), ("openenv.yaml", 1)),
    "EK112": (edit("openenv.yaml", "    floor_margin: 0.1\n", ""), ("openenv.yaml", 12)),
    "EK113": (edit("openenv.yaml", "range: [0.0, 1.0]", "range: [1.0, 0.0]"), ("openenv.yaml", 12)),
    "EK114": (
        edit("openenv.yaml", "    disk_mb: 1024\n", "    disk_mb: 1024\n    disk_gb: 1\n"),
        ("openenv.yaml", 20),
    ),
    "EK115": (edit("openenv.yaml", "  network:\n", "  netwrk:\n"), ("openenv.yaml", 25)),
    "EK116": (
        edit("openenv.yaml", "floor_margin: 0.1", "floor_margin: 0.05"),
        ("openenv.yaml", 15),
    ),
    "EK117": (
        edit("openenv.yaml", "  network:\n", "  judge: {model: m, version: '1'}\n  network:\n"),
        ("openenv.yaml", 25),
    ),
    "EK118": (
        edit(
            "openenv.yaml", "mode: no-network", "mode: no-network\n    allowed_hosts: [example.org]"
        ),
        ("openenv.yaml", 27),
    ),
    "EK119": (
        both(
            edit("openenv.yaml", ENVKIT_SECTION, ""),
            edit(
                "openenv.yaml",
                "  execution:\n",
                "  oracle: server.oracle:policy\n  max_steps: 5\n  execution:\n",
            ),
        ),
        ("openenv.yaml", 27),
    ),
    "EK120": (edit("openenv.yaml", EXECUTION, ""), ("openenv.yaml", 11)),
    "EK121": (delete("validation/runtime.json"), ("openenv.yaml", 29)),
    "EK122": (
        edit("openenv.yaml", "dockerfile: Dockerfile", "dockerfile: server/Dockerfile"),
        ("openenv.yaml", 30),
    ),
    "EK123": (
        edit("openenv.yaml", "  execution:\n", "  max_steps: 5\n  execution:\n"),
        ("openenv.yaml", 27),
    ),
    "EK201": (delete("pyproject.toml"), ("pyproject.toml", None)),
    "EK202": (edit("pyproject.toml", 'version = "0.1.0"\n', ""), ("pyproject.toml", 4)),
    "EK203": (edit("pyproject.toml", '"openenv>=0.10,<0.11"', '"fastapi"'), ("pyproject.toml", 11)),
    "EK204": (edit("pyproject.toml", "server = ", "serve = "), ("pyproject.toml", 17)),
    "EK205": (delete("client.py"), ("client.py", None)),
    "EK206": (
        edit(
            "server/app.py",
            '__name__ == "__main__":\n    main()',
            '__name__ == "__main__":\n    pass',
        ),
        ("server/app.py", 56),
    ),
    "EK207": (edit("models.py", "(Action):", "(BaseModel):"), ("models.py", 1)),
    "EK208": (edit("README.md", "colorFrom: blue", "colorFrom: '#00C9FF'"), ("README.md", 4)),
    "EK209": (delete("inference.py"), ("inference.py", None)),
    "EK210": (delete("uv.lock"), ("uv.lock", None)),
    "EK211": (
        edit("server/app.py", '"MAX_CONCURRENT_ENVS", "16"', '"MAX_CONCURRENT_ENVS", "1"'),
        ("server/app.py", 33),
    ),
    "EK212": (
        append(
            "server/echo_env_environment.py",
            "\n\nSEEN: list = []\n\n\ndef remember(x):\n    SEEN.append(x)\n",
        ),
        ("server/echo_env_environment.py", None),
    ),
    "EK213": (
        edit(
            "server/echo_env_environment.py",
            "    SUPPORTS_CONCURRENT_SESSIONS = True\n",
            "    SUPPORTS_CONCURRENT_SESSIONS = False\n",
        ),
        ("server/echo_env_environment.py", 45),
    ),
    "EK214": (
        edit("pyproject.toml", '"openenv>=0.10,<0.11"', '"openenv-core>=0.3.0,<0.4"'),
        ("pyproject.toml", 12),
    ),
    "EK215": (
        edit(
            "pyproject.toml",
            '"openenv>=0.10,<0.11",',
            '"openenv>=0.10,<0.11",\n    "openenv-core>=0.3",',
        ),
        ("pyproject.toml", 13),
    ),
    # the README keeps the echo template's text while `models.py` no longer has the
    # fingerprint `envkit init` recorded for it
    "EK224": (
        edit(
            "README.md",
            "---\n\n# ",
            "---\n\n<!-- envkit:template echo models.py=000000000000 -->\n\n# ",
        ),
        ("README.md", 9),
    ),
    "EK222": (
        edit(
            "pyproject.toml",
            '"openenv>=0.10,<0.11",',
            '"openenv>=0.10,<0.11",\n    "tomlkit>=0.12",',
        ),
        ("uv.lock", None),
    ),
    # junit-xml is installed in the test venv (an envkit dependency) but not declared here
    "EK223": (
        edit(
            "server/echo_env_environment.py", "import random\n", "import random\nimport junit_xml\n"
        ),
        ("server/echo_env_environment.py", 11),
    ),
    "EK301": (delete("Dockerfile"), ("Dockerfile", None)),
    "EK302": (move("Dockerfile", "server/Dockerfile"), ("server/Dockerfile", None)),
    "EK303": (append("Dockerfile", "FORM python:3.11-slim\n"), ("Dockerfile", 40)),
    "EK304": (edit("Dockerfile", "FROM python:3.11-slim", ""), ("Dockerfile", 8)),
    "EK305": (edit("Dockerfile", "FROM python:3.11-slim", "FROM python:latest"), ("Dockerfile", 3)),
    "EK220": (write("notes.py", "#" + "x" * (1 << 20) + "\n"), ("notes.py", None)),
    "EK221": (link_outside("helpers.py"), ("helpers.py", None)),
    "EK306": (
        edit("Dockerfile", "RUN useradd", "RUN --mount=type=cache,target=/root/.cache useradd"),
        ("Dockerfile", 17),
    ),
    "EK307": (edit("Dockerfile", "EXPOSE 8000", "EXPOSE 7860"), ("Dockerfile", 33)),
    "EK308": (edit("Dockerfile", "USER 1000\n", ""), ("Dockerfile", 3)),
    "EK309": (
        edit("Dockerfile", "WORKDIR /app\n", "WORKDIR /app\nARG HF_TOKEN\n"),
        ("Dockerfile", 22),
    ),
    "EK310": (
        edit("Dockerfile", "COPY pyproject.toml uv.lock* ./", "COPY . ./"),
        ("Dockerfile", 25),
    ),
    "EK311": (
        edit("Dockerfile", '"--host", "0.0.0.0"', '"--host", "127.0.0.1"'),
        ("Dockerfile", 39),
    ),
    "EK601": (write("prod.env", "HF_TOKEN=redacted\n"), ("prod.env", None)),
    "EK602": (write("settings.py", f'TOKEN = "{FAKE_HF_TOKEN}"\n'), ("settings.py", 1)),
    "EK603": (big_file, ("episodes.bin", None)),
    "EK606": (huge_file, ("episodes.bin", None)),
    "EK607": (latin1_name, ("r\\xe9sum\\xe9.txt", None)),
    "EK604": (delete(".gitignore"), (".gitignore", None)),
    "EK605": (delete(".dockerignore"), (".dockerignore", None)),
}


# Editing `[project] dependencies` without `uv lock` also leaves the lock stale (EK222), and
# replacing openenv by fastapi drops uvicorn, which server/app.py imports (EK223): both true.
ALSO: dict[str, set[str]] = {"EK203": {"EK222", "EK223"}, "EK214": {"EK222"}, "EK215": {"EK222"}}


def static_codes() -> list[str]:
    import envkit.validation.rules  # noqa: F401

    return codes_of(Stage.STATIC)


def test_every_static_rule_has_a_fixture() -> None:
    assert static_codes() == sorted(CASES)


def test_clean_echo_template_has_zero_findings(clean_env: Path) -> None:
    report = validate(clean_env, static=True)
    assert [(f.code, str(f.location), f.message) for f in report.findings] == []
    assert report.passed
    assert report.summary["checks_run"] == len(static_codes())


@pytest.mark.parametrize("code", sorted(CASES))
def test_rule_fixture_produces_exactly_its_finding(code: str, clean_env: Path) -> None:
    mutate, where = CASES[code]
    mutate(clean_env)
    report = validate(clean_env, static=True)
    codes = {f.code for f in report.findings}
    assert codes == {code} | ALSO.get(code, set()), [(f.code, f.message) for f in report.findings]
    first = next(f for f in report.findings if f.code == code)
    rule = RULES[code]
    assert first.name == rule.name and first.url == rule.url and first.fix
    assert report.passed is all(RULES[c].severity is not Severity.ERROR for c in codes)
    if where is not None:
        assert first.location is not None
        assert first.location.file == where[0]
        if where[1] is not None:
            assert first.location.line == where[1], first.message


def test_secret_value_is_never_shown(clean_env: Path) -> None:
    CASES["EK602"][0](clean_env)
    report = validate(clean_env, static=True)
    from envkit.validation.report import render

    for fmt in ("text", "json", "github", "junit"):
        assert FAKE_HF_TOKEN not in render(report, fmt)
        assert FAKE_HF_TOKEN[4:] not in render(report, fmt)
    assert "hf_a…" in report.findings[0].message


def test_dockerfile_env_value_token_is_flagged_without_value(clean_env: Path) -> None:
    edit("Dockerfile", "WORKDIR /app\n", f"WORKDIR /app\nENV SETTING={FAKE_HF_TOKEN}\n")(clean_env)
    report = validate(clean_env, static=True)
    # the ENV itself (EK309) and the Dockerfile as an uploaded file holding a token (EK602)
    assert sorted(f.code for f in report.findings) == ["EK309", "EK602"]
    assert all(FAKE_HF_TOKEN not in f.message for f in report.findings)
    assert "Hugging Face token" in report.findings[0].message


def test_manifest_problems_are_all_reported_and_located(clean_env: Path) -> None:
    text = (clean_env / "openenv.yaml").read_text()
    text = text.replace("port: 8000", "port: 0").replace("max_steps: 5", "max_steps: 0")
    text = text.replace("seeds:", "sedes:").replace("memory_mb: 1024", "memory_mb: -1")
    (clean_env / "openenv.yaml").write_text(text)
    report = validate(clean_env, static=True)
    got = sorted((f.code, f.location.line) for f in report.findings)
    assert got == [("EK107", 7), ("EK108", 37), ("EK109", 38), ("EK113", 18)]
    typo = next(f for f in report.findings if f.code == "EK109")
    assert "`seeds`" in typo.message


def test_top_level_typo_is_flagged(clean_env: Path) -> None:
    edit("openenv.yaml", "envkit:", "envkti:")(clean_env)
    report = validate(clean_env, static=True)
    assert [(f.code, f.location.line) for f in report.findings] == [("EK109", 35)]
    assert "did you mean `envkit`" in report.findings[0].message


def test_policy_bounds_are_each_located(clean_env: Path) -> None:
    text = (clean_env / "openenv.yaml").read_text()
    text = text.replace("oracle_tolerance: 0.0", "oracle_tolerance: 0.2")
    text = text.replace("floor_margin: 0.1", "floor_margin: 0.1\n    variance_tolerance: 0.3")
    text = text.replace("episode_timeout_s: 60", "episode_timeout_s: 3601")
    (clean_env / "openenv.yaml").write_text(text)
    report = validate(clean_env, static=True)
    got = sorted((f.code, f.location.line) for f in report.findings)
    # variance_tolerance without llm_judged is fine for OpenEnv's model, but over the bound
    assert got == [("EK116", 14), ("EK116", 16), ("EK116", 21)]


def test_openenv_init_manifest_is_valid_and_keeps_defaults(tmp_path: Path) -> None:
    """The manifest `openenv init` 0.10 writes: no error, only the schema-1 warning, and the
    defaults envkit needs resolved (issue #11: it used to give four false EK109 errors)."""
    from envkit.envdir.manifest import read_manifest

    (tmp_path / "openenv.yaml").write_text(OPENENV_INIT_MANIFEST)
    manifest = read_manifest(tmp_path)
    assert manifest.validation is not None and manifest.validation.schema_version == "1"
    spec = manifest.spec
    assert spec.reward_range == (0.0, 1.0) and spec.floor_margin == 0.1
    assert spec.episode_timeout_s == 60.0 and spec.memory_mb == 1024 and spec.cpu == 1.0
    assert spec.network_mode == "public" and spec.oracle is None and spec.max_steps is None


def test_legacy_layout_still_resolves(tmp_path: Path) -> None:
    from envkit.envdir.manifest import read_manifest

    (tmp_path / "openenv.yaml").write_text(
        "name: old\nvalidation:\n  reward_range: [-1.0, 2.0]\n  max_steps: 7\n"
        "  oracle: server.oracle:policy\n  floor_margin: 0.3\n"
    )
    m = read_manifest(tmp_path)
    assert m.validation is None
    assert (m.spec.reward_range, m.spec.max_steps, m.spec.floor_margin) == ((-1.0, 2.0), 7, 0.3)
    assert m.spec.oracle == "server.oracle:policy"


OPENENV_INIT_MANIFEST = """spec_version: 1
name: my_env
version: 0.1.0
type: space
runtime: fastapi
app: server.app:app
port: 8000
validation:
  reward:
    range: [0.0, 1.0]
    oracle_tolerance: 0.0
    floor_margin: 0.1
  resources:
    cpu: 1.0
    memory_mb: 1024
    disk_mb: 512
    episode_timeout_s: 60.0
  capabilities:
    verifier:
      kind: reward_channel
  types:
    tags: [demo]
"""


def test_duplicate_yaml_key_is_located(clean_env: Path) -> None:
    append("openenv.yaml", "port: 9000\n")(clean_env)
    report = validate(clean_env, static=True)
    assert [f.code for f in report.findings] == ["EK102"]
    assert report.findings[0].location.line == 40
    assert "duplicate key" in report.findings[0].message


def test_static_results_do_not_depend_on_asserts(clean_env: Path, tmp_path: Path) -> None:
    """`python -O` strips asserts: the static stage must give the same findings."""
    import json
    import subprocess
    import sys

    delete("inference.py")(clean_env)
    code = (
        "import json,sys; from envkit.validation import validate; "
        "r = validate(sys.argv[1], static=True); print(json.dumps(r.to_dict()['findings']))"
    )
    outs = [
        subprocess.run(
            [sys.executable, *flags, "-c", code, str(clean_env)],
            check=True,
            capture_output=True,
            text=True,
            env={**os.environ},
        ).stdout
        for flags in ([], ["-O"])
    ]
    assert json.loads(outs[0]) == json.loads(outs[1])
    assert re.search(r"EK209", outs[0])


@pytest.mark.parametrize(
    "expose", ["EXPOSE 2000\nEXPOSE 8000", "EXPOSE 8000\nEXPOSE 2000", "EXPOSE 2000 8000/tcp"]
)
def test_every_expose_line_counts(clean_env: Path, expose: str) -> None:
    """carla_env's `EXPOSE 8000` then `EXPOSE 2000` exposes the manifest port (issue #13)."""
    edit("Dockerfile", "EXPOSE 8000", expose)(clean_env)
    report = validate(clean_env, static=True)
    assert [f.code for f in report.findings] == []


def test_port_missing_from_all_expose_lines_is_one_finding(clean_env: Path) -> None:
    edit("Dockerfile", "EXPOSE 8000", "EXPOSE 7860\nEXPOSE 2000")(clean_env)
    report = validate(clean_env, static=True)
    assert [(f.code, f.location.line) for f in report.findings] == [("EK307", 33)]
    assert "got 7860, 2000" in report.findings[0].message


@pytest.mark.parametrize(
    ("command", "bound"),
    [
        ('CMD ["uvicorn", "server.app:app", "--host", "localhost", "--port", "8000"]', "localhost"),
        ("CMD uvicorn server.app:app --host=127.0.0.1 --port 8000", "127.0.0.1"),
        ('ENTRYPOINT ["gunicorn", "-b", "[::1]:8000", "server.app:app"]', "[::1]"),
        ('CMD ["python", "-m", "server.app", "--bind", "127.0.1.1:8000"]', "127.0.1.1"),
    ],
)
def test_server_bound_to_loopback_in_the_image(clean_env: Path, command: str, bound: str) -> None:
    edit(
        "Dockerfile",
        'CMD ["uvicorn", "server.app:app", "--host", "0.0.0.0", "--port", "8000"]',
        command,
    )(clean_env)
    report = validate(clean_env, static=True)
    assert [(f.code, f.location.line) for f in report.findings] == [("EK311", 39)]
    assert f"binds `{bound}`" in report.findings[0].message


@pytest.mark.parametrize(
    "command",
    [
        'CMD ["uvicorn", "server.app:app", "--host", "0.0.0.0", "--port", "8000"]',
        'CMD ["uvicorn", "server.app:app", "--host", "::", "--port", "8000"]',
        'CMD ["uvicorn", "server.app:app", "--host", "localhost.example.org", "--port", "8000"]',
    ],
)
def test_server_on_every_interface_is_not_loopback(clean_env: Path, command: str) -> None:
    # the HEALTHCHECK's http://127.0.0.1:8000 (line 37) is the container calling itself: fine
    edit(
        "Dockerfile",
        'CMD ["uvicorn", "server.app:app", "--host", "0.0.0.0", "--port", "8000"]',
        command,
    )(clean_env)
    assert [f.code for f in validate(clean_env, static=True).findings] == []


def test_loopback_in_an_earlier_stage_does_not_count(clean_env: Path) -> None:
    edit(
        "Dockerfile",
        "FROM python:3.11-slim",
        'FROM python:3.11-slim AS probe\nCMD ["uvicorn", "a:app", "--host", "127.0.0.1"]\n'
        "FROM python:3.11-slim",
    )(clean_env)
    assert "EK311" not in {f.code for f in validate(clean_env, static=True).findings}
