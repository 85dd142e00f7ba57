"""Server of the realworld_sparse test environment."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openenv.core.env_server.http_server import create_app  # noqa: E402

from models import SparseAction, SparseObservation  # noqa: E402
from server.realworld_sparse_environment import SparseEnvironment  # noqa: E402

app = create_app(
    SparseEnvironment, SparseAction, SparseObservation, env_name="realworld_sparse",
    max_concurrent_envs=1)
