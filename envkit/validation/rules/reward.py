"""EK5xx reward-integrity rules (registered here, checked by envkit.validation.runtime)."""
