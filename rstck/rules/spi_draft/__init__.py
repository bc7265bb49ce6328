"""The opt-in spi-draft profile: the early Reactive Streams SPI draft (its items: catalogue.toml).

One module per section of the draft; the checks observe publishers through `probe.DraftProbe`. They run
only under `--profile spi-draft` or `--profile all` (rstck/execution/plan.py), and are charged to spi.* items only.
"""

from rstck.core.plugins import Profile

PROFILE = Profile(
    name="spi-draft",
    title="Reactive Streams SPI, early draft (opt-in profile spi-draft)",
    package=__name__,
    checks=("subscribe", "request_more", "cancel", "publisher", "on_next", "on_terminal", "subscriber", "processor",
            "generally"),
    subjects=("processor", "subscriber", "publisher"),
    marker="spi_draft",
    markers={"spi_draft": "checks of the opt-in SPI draft profile (spi.*; --rstck-profile spi-draft)",
             "subscribe": "SPI draft checks of Publisher::subscribe (spi.subscribe.*)",
             "request_more": "SPI draft checks of Subscription::requestMore (spi.request-more.*)",
             "cancel": "SPI draft checks of Subscription::cancel (spi.cancel.*)",
             "on_next": "SPI draft checks of Subscriber::onSubscribe and onNext (spi.on-next.*)",
             "on_terminal": "SPI draft checks of Subscriber::onComplete and onError (spi.on-terminal.*)",
             "generally": "SPI draft checks of its \"Generally\" (spi.generally.*)",
             "publisher": "checks of a publisher", "subscriber": "checks of a subscriber",
             "processor": "checks of a processor"},
    section_needs={"subscribe": frozenset({"publisher"}), "request_more": frozenset({"publisher"}),
                   "cancel": frozenset({"publisher"}), "publisher": frozenset({"publisher"}),
                   "on_next": frozenset({"subscriber"}), "on_terminal": frozenset({"subscriber"}),
                   "subscriber": frozenset({"subscriber"}), "processor": frozenset({"processor"})},
    exports={"DraftNames": "rstck.rules.spi_draft.names"},
)
