"""`envkit --help`, `--version`, `python -m envkit`: fast path and exit codes."""

import subprocess
import sys

from envkit import __version__

HEAVY = (
    "docker",
    "huggingface_hub",
    "jinja2",
    "cookiecutter",
    "uvicorn",
    "openenv",
    "openai",
    "hypothesis",
    "gradio",
    "fastapi",
)

_PROBE = """
import sys
sys.argv = ["envkit"] + sys.argv[1:]
try:
    from envkit.cli import main
    main()
except SystemExit:
    pass
heavy = [m for m in {heavy!r} if m in sys.modules]
sys.stderr.write("HEAVY=" + ",".join(heavy) + "\\n")
"""


def _run_probe(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", _PROBE.format(heavy=HEAVY), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_help_imports_nothing_heavy():
    proc = _run_probe("--help")
    assert "Usage" in proc.stdout
    assert "HEAVY=\n" in proc.stderr, proc.stderr


def test_subcommand_help_imports_nothing_heavy():
    for command in ("init", "run", "templates"):
        proc = _run_probe(command, "--help")
        assert "Examples" in proc.stdout, command
        assert "HEAVY=\n" in proc.stderr, (command, proc.stderr)


def test_version(cli):
    result = cli("--version")
    assert result.exit_code == 0
    assert result.stdout.strip().startswith(f"envkit {__version__} (")


def test_python_dash_m():
    proc = subprocess.run(
        [sys.executable, "-m", "envkit", "--version"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and __version__ in proc.stdout


def test_unknown_command_is_a_usage_error(cli):
    result = cli("frobnicate")
    assert result.exit_code == 2


def test_no_args_shows_help(cli):
    result = cli()
    assert "Usage" in result.output
