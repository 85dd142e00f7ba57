"""The lanes of a validate run: source/URL, docker, training. Each lane is one way
``envkit validate`` plays an environment (the server started from its source or reached at a
URL, its image run hardened, its training-side code run the way a trainer does); the
orchestration in :mod:`envkit.validation` starts them and merges what they evaluated."""
