"""Server of the declared_relative test environment.

DEFECT: imports relative to the package, like the in-repo environments of
huggingface/OpenEnv `envs/`: `uvicorn server.app:app` run from this folder (the manifest's
`app`, what a Space and `openenv` start) exits with "attempted relative import beyond
top-level package"; only `uvicorn declared_relative.server.app:app` from the parent folder
serves.
"""

from openenv.core.env_server.http_server import create_app

from ..models import FixedAction, FixedObservation
from .declared_relative_environment import FixedEnvironment

app = create_app(
    FixedEnvironment, FixedAction, FixedObservation, env_name="declared_relative",
    max_concurrent_envs=1)
