"""The template family's fixtures (tests/templates/conftest.py), shared with the bridges'
tests: every template generated, locked and installed once per session."""

from tests.templates.conftest import built_envs, every_env  # noqa: F401 - pytest fixtures
