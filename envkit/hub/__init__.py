"""Deploying environments to Hugging Face Spaces: :func:`push` and :func:`fork`.

``huggingface_hub`` is imported only inside these functions, so ``import envkit.hub`` is cheap.
"""

from envkit.hub.deploy import AppCheck, ForkResult, PushResult, check_app, fork, push

__all__ = ["AppCheck", "ForkResult", "PushResult", "check_app", "fork", "push"]
