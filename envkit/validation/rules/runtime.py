"""EK4xx runtime and protocol rules (registered here, checked by envkit.validation.runtime)."""
