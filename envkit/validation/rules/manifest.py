"""EK1xx manifest rules (openenv.yaml)."""
