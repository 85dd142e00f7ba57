"""`envkit label` help: examples shown, nothing heavy imported (fastapi, uvicorn,
huggingface_hub, jinja2 stay unloaded)."""

from __future__ import annotations

from tests.cli.test_help import _run_probe


def test_label_help_is_light_and_has_examples():
    for args in (
        ("--help",),
        ("label", "--help"),
        ("label", "export", "--help"),
        ("label", "serve", "--help"),
        ("label", "push", "--help"),
    ):
        proc = _run_probe(*args)
        assert "Usage" in proc.stdout, args
        assert "HEAVY=\n" in proc.stderr, (args, proc.stderr)
        if args == ("--help",):
            assert "label" in proc.stdout
        else:
            assert "Examples" in proc.stdout, args


def test_subcommand_names_are_not_taken_as_folders(cli, tmp_path):
    # `envkit label export DIR`: export is the subcommand; `envkit label DIR`: serve
    result = cli("label", "export", tmp_path / "nope")
    assert result.exit_code == 2 and "no such eval folder" in result.stderr
    result = cli("label", tmp_path / "nope", "--port", "9")
    assert result.exit_code == 2 and "no such eval folder" in result.stderr


def test_missing_extras_name_the_label_extra(cli, eval_dir, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow -> ImportError
    result = cli("label", "export", eval_dir, "--format", "parquet")
    assert result.exit_code == 2 and "rl-envkit[label]" in result.stderr
    assert not (eval_dir / "preferences.parquet").exists()
    monkeypatch.setitem(sys.modules, "fastapi", None)
    result = cli("label", eval_dir, "--port", "9")
    assert result.exit_code == 2 and "rl-envkit[label]" in result.stderr
    assert "Traceback" not in result.output


def test_port_in_use_is_a_clear_error(cli, eval_dir):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = cli("label", eval_dir, "--port", str(port))
    assert result.exit_code == 2
    assert "Cannot listen on 127.0.0.1" in result.stderr and "--port" in result.stderr
