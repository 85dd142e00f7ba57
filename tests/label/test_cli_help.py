"""`envkit label` help: examples shown, nothing heavy imported (fastapi, uvicorn,
huggingface_hub, jinja2 stay unloaded)."""

from __future__ import annotations

from tests.cli.test_help import _run_probe


def test_label_help_is_light_and_has_examples():
    for args in (("--help",), ("label", "--help"), ("label", "export", "--help"),
                 ("label", "serve", "--help"), ("label", "push", "--help")):
        proc = _run_probe(*args)
        assert "Usage" in proc.stdout, args
        assert "HEAVY=\n" in proc.stderr, (args, proc.stderr)
        if args != ("--help",):
            assert "Examples" in proc.stdout, args
    assert "label" in _run_probe("--help").stdout


def test_subcommand_names_are_not_taken_as_folders(cli, tmp_path):
    # `envkit label export DIR`: export is the subcommand; `envkit label DIR`: serve
    result = cli("label", "export", tmp_path / "nope")
    assert result.exit_code == 2 and "no such eval folder" in result.stderr
    result = cli("label", tmp_path / "nope", "--port", "9")
    assert result.exit_code == 2 and "no such eval folder" in result.stderr
