"""``run_container``'s steps against a real engine, for the paths `envkit run --docker`'s own
tests do not reach: the hardened run (the echo template is ``no-network``, so its port is an
exec relay), the name checks, the stale-manifest warning, and the reproduce hint of a failed
hardened start. Nothing may be left behind on any path."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.container._util import containers_with, write_dockerfile

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("docker_engine")]


def _labels(run_id: str, case: str) -> dict[str, str]:
    return {"envkit.test": run_id, "envkit.case": case}


def test_hardened_no_network_run_is_relayed_and_stops_clean(built_echo, dclient, run_id):
    from envkit import run_container

    running = run_container(
        built_echo.path, tag=built_echo.tag, hardened=True, labels=_labels(run_id, "hardened")
    )
    try:
        assert running.build is None and running.ready_s > 0
        assert running.docker_run.startswith("docker run --rm ")
        assert "--network none" in running.docker_run
        assert running.docker_run.endswith(built_echo.tag)
        attrs = dclient.containers.get(running.id).attrs
        assert attrs["HostConfig"]["ReadonlyRootfs"] is True
        assert attrs["HostConfig"]["NetworkMode"] == "none"
        assert attrs["Config"]["User"] == "65532:65532"
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", running.url)
        assert httpx.get(f"{running.url}/health", timeout=10).status_code == 200
    finally:
        running.stop()
        running.close()
    assert containers_with(dclient, run_id, **{"envkit.case": "hardened"}) == []


def test_invalid_name_is_refused_before_the_engine(built_echo, dclient, run_id):
    from envkit import run_container
    from envkit.errors import UsageError

    with pytest.raises(UsageError, match="is not a valid container name"):
        run_container(
            built_echo.path, tag=built_echo.tag, name="-bad name", labels=_labels(run_id, "bad")
        )
    assert containers_with(dclient, run_id, **{"envkit.case": "bad"}) == []


def test_taken_names_are_refused_and_nothing_is_created(built_echo, dclient, run_id):
    from envkit import run_container
    from envkit.errors import UsageError

    mine = run_container(
        built_echo.path,
        tag=built_echo.tag,
        name=f"envkit-test-taken-{run_id}",
        labels=_labels(run_id, "taken"),
    )
    foreign = dclient.containers.create(
        "python:3.11-slim",
        ["true"],
        name=f"envkit-test-other-{run_id}",
        labels=_labels(run_id, "x"),
    )
    try:
        with pytest.raises(UsageError, match=r"already exists \(running\)") as err:
            run_container(
                built_echo.path, tag=built_echo.tag, name=mine.name, labels=_labels(run_id, "dup")
            )
        assert f"envkit stop {mine.name}" in (err.value.hint or "")
        with pytest.raises(UsageError, match="already exists and envkit did not start it"):
            run_container(
                built_echo.path,
                tag=built_echo.tag,
                name=foreign.name,
                labels=_labels(run_id, "dup"),
            )
        assert containers_with(dclient, run_id, **{"envkit.case": "dup"}) == []
        assert dclient.containers.get(mine.id).status == "running"
    finally:
        mine.stop()
        mine.close()
        foreign.remove(force=True)


def test_image_of_another_manifest_warns_and_is_used(built_echo, copy_env, dclient, run_id):
    from envkit import run_container

    env = copy_env(built_echo.path, "stale")
    manifest = env / "openenv.yaml"
    manifest.write_text(manifest.read_text() + "\n# edited after the build\n")
    events = []
    running = run_container(
        env, tag=built_echo.tag, on_event=events.append, labels=_labels(run_id, "stale")
    )
    try:
        assert running.build is None
        warnings = [e.text for e in events if e.kind == "warning"]
        assert len(warnings) == 1 and "built from another openenv.yaml" in warnings[0]
        assert f"The image {built_echo.tag} " in warnings[0]
    finally:
        running.stop()
        running.close()
    assert containers_with(dclient, run_id, **{"envkit.case": "stale"}) == []


def test_failed_hardened_start_hints_the_docker_run_line(built_echo, copy_env, dclient, run_id):
    from envkit import run_container
    from envkit.errors import ContainerError

    env = copy_env(built_echo.path, "sleepy-hardened")
    df = re.sub(
        r"^CMD .*$", 'CMD ["sleep", "300"]', (env / "Dockerfile").read_text(), flags=re.MULTILINE
    )
    write_dockerfile(env, df)
    with pytest.raises(ContainerError, match="did not answer GET /health within 2 s") as err:
        run_container(
            env,
            tag=f"envkit-test-sleepy-hardened:{run_id}",
            hardened=True,
            timeout_s=2,
            labels=_labels(run_id, "sleepy-hardened"),
        )
    assert "Reproduce by hand: `docker run --rm " in (err.value.hint or "")
    assert containers_with(dclient, run_id, **{"envkit.case": "sleepy-hardened"}) == []
