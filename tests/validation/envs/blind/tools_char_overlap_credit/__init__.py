"""Prices: an OpenEnv environment (tools template, made with envkit)."""

__all__ = ["PricesAction", "PricesObservation", "PricesEnv"]

# Only as an installed package (`import prices`): pytest and uvicorn also load this
# directory as plain files, where relative imports have no parent package.
if __package__:
    from .client import PricesEnv
    from .models import PricesAction, PricesObservation
