"""`build_image(deadline=...)`: a build past its deadline is stopped and raises
BuildTimeoutError, leaving no running build container."""

from __future__ import annotations

import time

import pytest

from tests.container._util import containers_mentioning, write_dockerfile


def test_sleeping_build_stops_at_the_deadline(dclient, copy_env, echo_env, run_id):
    from envkit.container import build_image
    from envkit.errors import BuildError, BuildTimeoutError

    env = copy_env(echo_env, "deadline")
    marker = f"slow-{run_id}"
    write_dockerfile(env, f'FROM python:3.11-slim\nRUN echo {marker} && sleep 120\nCMD ["true"]\n')
    start = time.monotonic()
    with pytest.raises(BuildTimeoutError) as info:
        build_image(
            env,
            tag=f"envkit-test-deadline:{run_id}",
            labels={"envkit.test": run_id},
            check=False,
            deadline=start + 10,
        )
    elapsed = time.monotonic() - start
    assert isinstance(info.value, BuildError) and info.value.exit_code == 1
    assert 9 <= elapsed < 20, elapsed
    assert "exceeded the time limit" in info.value.message
    assert "--timeout" in (info.value.hint or "")
    # The engine may take a moment to tear the killed step down.
    for _ in range(20):
        running = [c for c in containers_mentioning(dclient, marker) if c.status == "running"]
        if not running:
            break
        time.sleep(0.5)
    assert running == []
    assert dclient.images.list(name=f"envkit-test-deadline:{run_id}") == []
