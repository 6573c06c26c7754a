"""Desktop-app measurements and captures: start-up, stalls and scrolling timed offscreen (:mod:`.measure`, with its
child processes :mod:`.load` and :mod:`.paint`), and the views rendered for the README (:mod:`.capture`).

They drive the real ``ui`` widgets but are not part of the app, so they live with the other benchmarks.
"""
