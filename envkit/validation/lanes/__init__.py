"""The lanes of a validate run: the source/URL lane (:mod:`.source`), the stages every lane
shares (:mod:`.stages`: the static stage, the runtime plan, target and stage, the digests), and
the training lane (:mod:`.training`). The docker lane, which needs an image built and run, is
:mod:`envkit.container.lane` on the floor above."""
