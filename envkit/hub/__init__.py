"""Deploying environments to Hugging Face Spaces: :func:`push` and :func:`fork`.

``huggingface_hub`` is imported only inside the functions that call the Hub, so ``import
envkit.hub`` does not import it.
"""

from envkit.hub.deploy import fork, push
from envkit.hub.results import AppCheck, ForkResult, PushResult
from envkit.hub.verify import check_app

__all__ = ["AppCheck", "ForkResult", "PushResult", "check_app", "fork", "push"]
