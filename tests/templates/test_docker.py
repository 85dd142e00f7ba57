"""The rlvr and gymnasium images build on the real engine (legacy builder via docker-py) and
run as uid 1000 (issue 6). Images are removed afterwards."""

from __future__ import annotations

import uuid

import pytest

pytestmark = [pytest.mark.docker, pytest.mark.timeout(900)]


@pytest.mark.parametrize("template", ["rlvr", "gymnasium"])
def test_image_builds_on_the_legacy_builder(docker_engine, built_envs, template):
    from envkit.container._engine import docker_client
    from envkit.container.build import build_image

    tag = f"envkit-test-{template}:{uuid.uuid4().hex[:8]}"
    result = build_image(built_envs[template].path, tag=tag)
    client = docker_client()
    try:
        assert result.builder == "docker-py" and tag in result.tags
        config = client.api.inspect_image(result.image_id)["Config"]
        assert config["User"] == "1000"
        assert "8000/tcp" in config["ExposedPorts"]
    finally:
        # parents kept: the dependency layers are the build cache of the template's other
        # Docker tests (the same pyproject.toml and uv.lock)
        client.images.remove(result.image_id, force=True, noprune=True)
        client.close()
