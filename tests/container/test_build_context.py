"""The build context envkit sends (after ``.dockerignore``): sizes and the largest paths."""

from __future__ import annotations

from envkit.container.build_context import LARGE_CONTEXT_BYTES, scan_context


def test_large_context_warning_names_biggest_paths(copy_env, echo_env):
    env = copy_env(echo_env, "big")
    (env / "data").mkdir()
    with open(env / "data" / "blob.bin", "wb") as fh:  # sparse: no real disk use
        fh.truncate(LARGE_CONTEXT_BYTES + 1)
    (env / "ignored").mkdir()
    with open(env / "ignored" / "huge.bin", "wb") as fh:
        fh.truncate(3 * LARGE_CONTEXT_BYTES)
    (env / ".dockerignore").write_text((env / ".dockerignore").read_text() + "ignored\n")
    scan = scan_context(env)
    assert LARGE_CONTEXT_BYTES < scan.total_bytes < 2 * LARGE_CONTEXT_BYTES
    assert scan.biggest[0][0] == "data/"
    assert all(not p.startswith("ignored") for p, _ in scan.biggest)
