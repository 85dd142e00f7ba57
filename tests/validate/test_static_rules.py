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


def link_outside(rel: str) -> Callable[[Path], None]:
    def _apply(root: Path) -> None:
        outside = root.parent / "outside.py"
        outside.write_text("X = 1\n")
        (root / rel).symlink_to(outside)
    return _apply


# code -> (mutation, expected (file, line) of the first finding or None to skip the check)
CASES: dict[str, tuple[Callable[[Path], None], tuple[str, int | None] | None]] = {
    "EK101": (delete("openenv.yaml"), ("openenv.yaml", None)),
    "EK102": (write("openenv.yaml", "name: echo_env\nport 8000\napp: [\n"), ("openenv.yaml", 3)),
    "EK103": (append("openenv.yaml", "variables: [A, B]\n"), ("openenv.yaml", 16)),
    "EK104": (edit("openenv.yaml", 'name: "echo_env"', "name: server"), ("openenv.yaml", 2)),
    "EK105": (edit("openenv.yaml", "app: server.app:app", "app: server/app.py"),
              ("openenv.yaml", 5)),
    "EK106": (edit("openenv.yaml", "app: server.app:app", "app: server.app:application"),
              ("openenv.yaml", 5)),
    "EK107": (edit("openenv.yaml", "port: 8000", "port: 80000"), ("openenv.yaml", 6)),
    "EK108": (edit("openenv.yaml", "reward_range: [0.0, 1.0]", "reward_range: [1.0, 0.0]"),
              ("openenv.yaml", 11)),
    "EK109": (edit("openenv.yaml", "max_steps:", "max_step:"), ("openenv.yaml", 12)),
    "EK110": (edit("openenv.yaml", "server.oracle:policy", "server.oracle:solve"),
              ("openenv.yaml", 13)),
    "EK201": (delete("pyproject.toml"), ("pyproject.toml", None)),
    "EK202": (edit("pyproject.toml", 'version = "0.1.0"\n', ""), ("pyproject.toml", 4)),
    "EK203": (edit("pyproject.toml", '"openenv-core>=0.3.0,<0.4"', '"fastapi"'),
              ("pyproject.toml", 11)),
    "EK204": (edit("pyproject.toml", "server = ", "serve = "), ("pyproject.toml", 17)),
    "EK205": (delete("client.py"), ("client.py", None)),
    "EK206": (edit("server/app.py", "    main(host=args.host, port=args.port)", "    pass"),
              ("server/app.py", 44)),
    "EK207": (edit("models.py", "(Action):", "(BaseModel):"), ("models.py", 1)),
    "EK208": (edit("README.md", "colorFrom: blue", "colorFrom: '#00C9FF'"), ("README.md", 4)),
    "EK209": (delete("inference.py"), ("inference.py", None)),
    "EK210": (delete("uv.lock"), ("uv.lock", None)),
    "EK211": (edit("server/app.py", '"MAX_CONCURRENT_ENVS", "16"', '"MAX_CONCURRENT_ENVS", "1"'),
              ("server/app.py", 33)),
    "EK212": (append("server/echo_env_environment.py",
                     "\n\nSEEN: list = []\n\n\ndef remember(x):\n    SEEN.append(x)\n"),
              ("server/echo_env_environment.py", None)),
    "EK213": (edit("server/echo_env_environment.py", "    SUPPORTS_CONCURRENT_SESSIONS = True\n",
                   "    SUPPORTS_CONCURRENT_SESSIONS = False\n"),
              ("server/echo_env_environment.py", 45)),
    "EK301": (delete("Dockerfile"), ("Dockerfile", None)),
    "EK302": (move("Dockerfile", "server/Dockerfile"), ("server/Dockerfile", None)),
    "EK303": (append("Dockerfile", "FORM python:3.11-slim\n"), ("Dockerfile", 40)),
    "EK304": (edit("Dockerfile", "FROM python:3.11-slim", ""), ("Dockerfile", 8)),
    "EK305": (edit("Dockerfile", "FROM python:3.11-slim", "FROM python:latest"),
              ("Dockerfile", 3)),
    "EK220": (write("notes.py", "#" + "x" * (1 << 20) + "\n"), ("notes.py", None)),
    "EK221": (link_outside("helpers.py"), ("helpers.py", None)),
    "EK306": (edit("Dockerfile", "RUN useradd",
                   "RUN --mount=type=cache,target=/root/.cache useradd"),
              ("Dockerfile", 17)),
    "EK307": (edit("Dockerfile", "EXPOSE 8000", "EXPOSE 7860"), ("Dockerfile", 33)),
    "EK308": (edit("Dockerfile", "USER 1000\n", ""), ("Dockerfile", 3)),
    "EK309": (edit("Dockerfile", "WORKDIR /app\n", "WORKDIR /app\nARG HF_TOKEN\n"),
              ("Dockerfile", 22)),
    "EK310": (edit("Dockerfile", "COPY pyproject.toml uv.lock* ./", "COPY . ./"),
              ("Dockerfile", 25)),
    "EK601": (write("prod.env", "HF_TOKEN=redacted\n"), ("prod.env", None)),
    "EK602": (write("settings.py", f'TOKEN = "{FAKE_HF_TOKEN}"\n'), ("settings.py", 1)),
    "EK603": (big_file, ("episodes.bin", None)),
    "EK606": (huge_file, ("episodes.bin", None)),
    "EK604": (delete(".gitignore"), (".gitignore", None)),
    "EK605": (delete(".dockerignore"), (".dockerignore", None)),
}


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
    assert codes == {code}, [(f.code, f.message) for f in report.findings]
    first = report.findings[0]
    rule = RULES[code]
    assert first.name == rule.name and first.url == rule.url and first.fix
    assert report.passed is (rule.severity is not Severity.ERROR)
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
    text = text.replace("floor_margin: 0.1", "floor_margn: 0.1")
    (clean_env / "openenv.yaml").write_text(text)
    report = validate(clean_env, static=True)
    got = sorted((f.code, f.location.line) for f in report.findings)
    assert got == [("EK107", 6), ("EK108", 12), ("EK109", 15)]
    typo = next(f for f in report.findings if f.code == "EK109")
    assert "`floor_margin`" in typo.message


def test_top_level_typo_is_flagged(clean_env: Path) -> None:
    edit("openenv.yaml", "validation:", "valdation:")(clean_env)
    report = validate(clean_env, static=True)
    assert [(f.code, f.location.line) for f in report.findings] == [("EK109", 10)]
    assert "did you mean `validation`" in report.findings[0].message


def test_duplicate_yaml_key_is_located(clean_env: Path) -> None:
    append("openenv.yaml", "port: 9000\n")(clean_env)
    report = validate(clean_env, static=True)
    assert [f.code for f in report.findings] == ["EK102"]
    assert report.findings[0].location.line == 16
    assert "duplicate key" in report.findings[0].message


def test_class_level_state_mutated_through_self(clean_env: Path) -> None:
    edit("server/echo_env_environment.py", "    SUPPORTS_CONCURRENT_SESSIONS = True\n",
         "    SUPPORTS_CONCURRENT_SESSIONS = True\n    _history = []\n")(clean_env)
    edit("server/echo_env_environment.py", "        self._state.step_count += 1\n",
         "        self._state.step_count += 1\n        self._history.append(action)\n")(clean_env)
    report = validate(clean_env, static=True)
    assert [f.code for f in report.findings] == ["EK212"]
    assert "class-level container `_history`" in report.findings[0].message


def test_invalid_toml_is_located(clean_env: Path) -> None:
    append("pyproject.toml", "\n[broken\n")(clean_env)
    report = validate(clean_env, static=True)
    assert [f.code for f in report.findings] == ["EK202"]
    assert report.findings[0].location.line is not None


def test_static_results_do_not_depend_on_asserts(clean_env: Path, tmp_path: Path) -> None:
    """`python -O` strips asserts: the static stage must give the same findings."""
    import json
    import subprocess
    import sys

    delete("inference.py")(clean_env)
    code = ("import json,sys; from envkit.validation import validate; "
            "r = validate(sys.argv[1], static=True); print(json.dumps(r.to_dict()['findings']))")
    outs = [subprocess.run([sys.executable, *flags, "-c", code, str(clean_env)], check=True,
                           capture_output=True, text=True, env={**os.environ}).stdout
            for flags in ([], ["-O"])]
    assert json.loads(outs[0]) == json.loads(outs[1])
    assert re.search(r"EK209", outs[0])
