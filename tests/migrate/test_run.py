"""`envkit migrate` on the previous release's renderings and on `openenv init` output
(issue #11, item 5): the dependency moves to `openenv`, the manifest to RFC 008 + `envkit:`,
user content survives, a second run changes nothing, and OpenEnv 0.10's own validator accepts
the result."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from envkit.migrate import MigrationRefused, migrate
from tests.migrate.conftest import LEGACY_TEMPLATES, openenv_init


def _tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _manifest(root: Path) -> dict:
    return YAML(typ="safe").load((root / "openenv.yaml").read_text())


def _no_openenv_core(root: Path) -> list[str]:
    hits = []
    for p in [
        root / "pyproject.toml",
        *root.glob("requirements*.txt"),
        *root.glob("server/requirements*.txt"),
        *root.glob("**/Dockerfile"),
    ]:
        if p.is_file():
            for line in p.read_text().splitlines():
                if "openenv-core" in line and not line.strip().startswith("#"):
                    hits.append(f"{p.name}: {line.strip()}")
    return hits


def openenv_validate(bin_dir: Path, root: Path, level: str = "static") -> dict:
    proc = subprocess.run(
        [str(bin_dir / "openenv"), "validate", str(root), "--level", level, "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.stdout.strip(), proc.stderr[-2000:]
    return json.loads(proc.stdout)


@pytest.mark.parametrize("template", LEGACY_TEMPLATES)
def test_legacy_rendering_moves_forward(legacy_copy, template: str) -> None:
    root = legacy_copy(template)
    before = _manifest(root)["validation"]
    result = migrate(root, probe_plan=False)
    assert {c.path for c in result.changes} == {"pyproject.toml", "openenv.yaml"}

    assert _no_openenv_core(root) == []
    assert '"openenv>=0.10,<0.11"' in (root / "pyproject.toml").read_text()
    m = _manifest(root)
    assert m["version"] == "0.1.0"
    assert m["validation"]["reward"]["range"] == before["reward_range"]
    assert m["validation"]["reward"]["floor_margin"] == before["floor_margin"]
    assert m["envkit"]["oracle"] == before["oracle"] == "server.oracle:policy"
    assert m["envkit"]["max_steps"] == before["max_steps"]
    assert m["envkit"]["seeds"] == before["seeds"]
    assert not {"reward_range", "max_steps", "oracle", "seeds"} & set(m["validation"])
    assert set(m["validation"]) >= {"reward", "resources", "capabilities", "types"}

    # idempotent: the second run changes nothing, on disk or in the result
    tree = _tree(root)
    again = migrate(root, probe_plan=False)
    assert again.changes == [] and _tree(root) == tree


def test_dry_run_writes_nothing_and_prints_a_diff(legacy_copy, cli) -> None:
    root = legacy_copy("echo")
    tree = _tree(root)
    res = cli("migrate", str(root), "--dry-run", "--no-probe-plan")
    assert res.exit_code == 0, res.output
    assert _tree(root) == tree
    assert "--- a/pyproject.toml" in res.stdout and "+++ b/openenv.yaml" in res.stdout
    assert '-    "openenv-core>=0.3.0,<0.4",' in res.stdout
    assert '+    "openenv>=0.10,<0.11",' in res.stdout
    assert "+envkit:" in res.stdout
    assert "would update openenv.yaml" in res.stderr


def test_unparsable_file_is_refused_and_nothing_changes(legacy_copy, cli) -> None:
    root = legacy_copy("guess")
    (root / "pyproject.toml").write_text((root / "pyproject.toml").read_text() + "\n[broken\n")
    tree = _tree(root)
    with pytest.raises(MigrationRefused, match=r"pyproject\.toml:\d+:\d+: cannot parse TOML"):
        migrate(root, probe_plan=False)
    res = cli("migrate", str(root), "--no-probe-plan")
    assert res.exit_code == 2
    assert "pyproject.toml" in res.stderr and "changed nothing" in res.stderr
    assert "Traceback" not in res.output
    assert _tree(root) == tree


def test_not_an_environment(tmp_path: Path, cli) -> None:
    res = cli("migrate", str(tmp_path))
    assert res.exit_code == 2
    assert "No openenv.yaml" in res.stderr


def test_legacy_manifest_passes_openenv_static(legacy_copy, openenv010_bin: Path) -> None:
    for template in LEGACY_TEMPLATES:
        root = legacy_copy(template)
        if template == "echo":  # the problem the issue reports (same manifest block on all six)
            assert openenv_validate(openenv010_bin, root)["verdict"] == "fail"
        migrate(root, probe_plan=False)
        after = openenv_validate(openenv010_bin, root)
        assert after["verdict"] == "pass", (template, after)


def test_openenv_init_outputs(
    tmp_path: Path, openenv010_bin: Path, openenv_core030_bin: Path
) -> None:
    new = openenv_init(openenv010_bin, tmp_path / "new", "oe_new")
    old = openenv_init(openenv_core030_bin, tmp_path / "old", "oe_old")

    # OpenEnv 0.10's own output: only the Dockerfile moves; the manifest is already RFC 008
    r = migrate(new, probe_plan=False)
    assert [c.path for c in r.changes] == ["Dockerfile", "server/Dockerfile"]
    assert (new / "Dockerfile").is_file() and not (new / "server" / "Dockerfile").exists()
    assert openenv_validate(openenv010_bin, new)["verdict"] == "pass"

    # the openenv-core era: dependency, requirements, manifest blocks, Dockerfile
    r = migrate(old, probe_plan=False)
    changed = {c.path for c in r.changes}
    assert {"pyproject.toml", "server/requirements.txt", "openenv.yaml", "Dockerfile"} <= changed
    assert _no_openenv_core(old) == []
    assert openenv_validate(openenv010_bin, old)["verdict"] == "pass"
    for root in (new, old):
        tree = _tree(root)
        assert migrate(root, probe_plan=False).changes == [] and _tree(root) == tree


def test_probe_plan_from_the_oracle_then_both_validators(legacy_copy, openenv010_bin: Path) -> None:
    """With the environment installed, migrate records the oracle's episode as OpenEnv's probe
    plan and declares `execution` (schema 2); OpenEnv's static level and envkit's full
    validate (runtime stage included) then pass."""
    from envkit.envdir.uv import uv_binary
    from envkit.validation import validate

    root = legacy_copy("echo")
    uv = uv_binary()
    subprocess.run([uv, "venv", "-q", str(root / ".venv")], check=True, timeout=120)
    python = str(root / ".venv" / "bin" / "python")
    subprocess.run(
        [uv, "pip", "install", "-q", "--python", python, "-e", str(root)], check=True, timeout=600
    )

    result = migrate(root)
    paths = [c.path for c in result.changes]
    assert "validation/runtime.json" in paths and result.notes == []
    plan = json.loads((root / "validation" / "runtime.json").read_text())
    assert plan["plan_schema_version"] == "1" and plan["reset"]["seed"] == 0
    assert 1 <= len(plan["actions"]) <= 100 and "message" in plan["actions"][0]
    m = _manifest(root)
    assert m["validation"]["execution"]["probe_path"] == "validation/runtime.json"
    assert m["validation"]["execution"]["dockerfile"] == "Dockerfile"
    assert migrate(root).changes == []  # idempotent with the plan too

    report = openenv_validate(openenv010_bin, root)
    assert report["verdict"] == "pass", report
    # the legacy echo pays its similarity on every attempt, so stalling pays (EK513) and a
    # fixed reply earns on every seed (EK525, the search): a reward-design defect of the old
    # template that migrating the manifest leaves alone
    env_report = validate(root, python=python, episodes=2, ignore=["EK513", "EK525"])
    errors = [(f.code, f.message) for f in env_report.findings if f.severity.value == "error"]
    assert errors == [] and env_report.passed
    # rendered --no-lock (EK210); its inference.py predates the [START]/[STEP]/[END] format (EK209)
    assert {f.code for f in env_report.findings} <= {"EK209", "EK210"}
