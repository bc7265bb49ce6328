"""The opt-in spi-draft profile: the early Reactive Streams SPI draft (specs/reactive-streams-spi-draft.txt).

One module per section of the draft; the checks observe publishers through `probe.DraftProbe`. They run
only under `--profile spi-draft` or `--profile all` (rstck/execution/plan.py), and are charged to spi.* items only.
"""
