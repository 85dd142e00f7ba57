"""envkit.envdir.launch.launch_candidates on small layouts (issue #13 item 1): which commands, in
which order, from which folder; duplicates folded."""

from __future__ import annotations

from pathlib import Path

from envkit.envdir.launch import LaunchCandidate, launch_candidates
from envkit.envdir.manifest import read_manifest

from .conftest import APP, ENVIRONMENT, MANIFEST, MODELS, write


def test_in_repo_layout_offers_the_package_form_second(in_repo: Path) -> None:
    cands = launch_candidates(in_repo, read_manifest(in_repo))
    assert [c.kind for c in cands] == ["manifest", "package"]
    manifest, package = cands
    assert (manifest.app, manifest.cwd, manifest.env()) == ("server.app:app", in_repo, {})
    assert package.app == "ping_env.server.app:app"
    assert package.cwd == in_repo.parent
    assert package.env() == {"PYTHONPATH": str(in_repo.parent)}
    assert package.label == "package form from the parent folder"


def test_script_and_dockerfile_forms_equal_to_earlier_ones_are_folded(in_repo: Path) -> None:
    # [project.scripts] server = ping_env.server.app:main serves ping_env.server.app:app from
    # the parent (= package form); the Dockerfile's `cd /app/env && uvicorn server.app:app`
    # is the manifest form. Neither is listed twice.
    cands = launch_candidates(in_repo, read_manifest(in_repo))
    keys = [(c.app, c.cwd) for c in cands]
    assert len(keys) == len(set(keys)) == 2


def test_no_init_py_means_no_package_form(in_repo: Path) -> None:
    (in_repo / "__init__.py").unlink()
    kinds = [c.kind for c in launch_candidates(in_repo, read_manifest(in_repo))]
    assert "package" not in kinds


def test_scripts_entry_without_app_runs_main(tmp_path: Path) -> None:
    root = write(
        tmp_path / "svc",
        {
            "pyproject.toml": '[project]\nname = "svc"\nversion = "0"\n'
            '[project.scripts]\nserver = "svc_server.main:run"\n',
            "svc_server/__init__.py": "",
            "svc_server/main.py": "def run():\n    return 0\n",
        },
    )
    (cand,) = launch_candidates(root, None)
    assert (cand.kind, cand.label) == ("script", "[project.scripts] server")
    assert cand.app is None and cand.main == "svc_server.main:run"
    argv = cand.argv("/py", "127.0.0.1", 8123)
    assert argv[:2] == ["/py", "-c"]
    assert "from svc_server.main import run" in argv[2] and "'8123'" in argv[2]
    assert cand.run_env("127.0.0.1", 8123)["PORT"] == "8123"


def test_scripts_entry_whose_module_defines_app_is_served_with_uvicorn(tmp_path: Path) -> None:
    root = write(
        tmp_path / "svc",
        {
            "pyproject.toml": '[project]\nname = "svc"\nversion = "0"\n'
            '[project.scripts]\nserver = "svc_server.main:run"\n',
            "svc_server/__init__.py": "",
            "svc_server/main.py": "try:\n    from .x import app\nexcept ImportError:\n"
            "    from x import app\n\ndef run():\n    pass\n",
        },
    )
    (cand,) = launch_candidates(root, None)
    assert cand.app == "svc_server.main:app"
    assert cand.argv("/py", "127.0.0.1", 9) == [
        "/py",
        "-m",
        "uvicorn",
        "svc_server.main:app",
        "--host",
        "127.0.0.1",
        "--port",
        "9",
    ]


def test_dockerfile_only_shell_form_cmd(tmp_path: Path) -> None:
    root = write(
        tmp_path / "svc",
        {
            "service/__init__.py": "",
            "service/api.py": "app = None\n",
            "Dockerfile": "FROM python:3.11-slim\nWORKDIR /srv\nCOPY . .\n"
            "CMD python -m uvicorn service.api:app --host 0.0.0.0 --port ${PORT:-8000}\n",
        },
    )
    (cand,) = launch_candidates(root, None)
    assert (cand.kind, cand.app, cand.cwd) == ("dockerfile", "service.api:app", root)
    assert cand.label == "Dockerfile CMD in WORKDIR"
    assert "Dockerfile line 4" in cand.source and "runs in /srv" in cand.source


def test_dockerfile_entrypoint_plus_cmd_of_the_final_stage(tmp_path: Path) -> None:
    root = write(
        tmp_path / "svc",
        {
            "service/api.py": "app = None\n",
            "other/api.py": "app = None\n",
            "Dockerfile": 'FROM python:3.11-slim AS build\nCMD ["uvicorn", "other.api:app"]\n'
            'FROM python:3.11-slim\nWORKDIR /srv\nENTRYPOINT ["uvicorn"]\n'
            'CMD ["service.api:app", "--host", "0.0.0.0"]\n',
        },
    )
    (cand,) = launch_candidates(root, None)
    assert cand.app == "service.api:app"


def test_dockerfile_gunicorn_with_uvicorn_worker(tmp_path: Path) -> None:
    root = write(
        tmp_path / "svc",
        {
            "server/app.py": "app = None\n",
            "server/Dockerfile": 'FROM python:3.11-slim\nCMD ["sh", "-c", "cd /app/env && gunicorn '
            "-w 4 -k uvicorn.workers.UvicornWorker -b 0.0.0.0:8000 "
            'server.app:app"]\n',
        },
    )
    cands = launch_candidates(root, None)
    # The default manifest app is found first; the Dockerfile names the same command.
    assert [(c.kind, c.app) for c in cands] == [("manifest", "server.app:app")]


def test_dockerfile_module_written_for_the_repository_root(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    root = write(
        repo / "envs" / "grid_env",
        {
            "server/app.py": "app = None\n",
            "server/Dockerfile": "FROM python:3.11-slim\nWORKDIR /app\nCOPY . /app\n"
            'CMD ["uvicorn", "envs.grid_env.server.app:app"]\n',
        },
    )
    cand = launch_candidates(root, None)[-1]
    assert (cand.kind, cand.app, cand.cwd) == ("dockerfile", "envs.grid_env.server.app:app", repo)
    assert cand.env() == {"PYTHONPATH": str(repo)}


def test_cmd_that_runs_no_asgi_server_gives_no_candidate(tmp_path: Path) -> None:
    root = write(
        tmp_path / "svc",
        {
            "Dockerfile": 'FROM python:3.11-slim\nCMD ["/start-carla.sh"]\n',
        },
    )
    assert launch_candidates(root, None) == []


def test_merged_env_prepends_pythonpath() -> None:
    cand = LaunchCandidate(
        kind="package", label="x", app="a:b", cwd=Path("/p"), pythonpath=(Path("/p"),)
    )
    merged = cand.merged_env({"PYTHONPATH": "/old", "X": "1"})
    assert merged["PYTHONPATH"].split(":") == ["/p", "/old"] and merged["X"] == "1"
    assert cand.merged_env({})["PYTHONPATH"] == "/p"


def test_manifest_app_written_for_an_enclosing_folder(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    root = write(
        repo / "envs" / "w_env",
        {
            "openenv.yaml": MANIFEST.format(app="envs.w_env.server.app:app"),
            "models.py": MODELS,
            "server/ping_environment.py": ENVIRONMENT.format(models="models"),
            "server/app.py": APP.format(models="models", env_module="server.ping_environment"),
        },
    )
    cands = launch_candidates(root, read_manifest(root))
    assert [(c.label, c.cwd) for c in cands] == [
        ("manifest app from the environment folder", root),
        ("manifest app from an enclosing folder", repo),
    ]
