"""The lanes of a validate run, each a module of its own: the source/URL lane
(:mod:`envkit.validation.lanes.source`) and the training lane; the docker lane, which needs
an image built and run, is :mod:`envkit.container.lane` on the floor above."""
