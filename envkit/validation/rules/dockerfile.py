"""EK3xx Dockerfile rules."""
