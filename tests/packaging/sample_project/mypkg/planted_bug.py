"""The range publisher with a bug planted on rule 3.9: request(n <= 0) is ignored instead of ending the stream
with on_error."""

import rstck

from mypkg.streams import RangePublisher, RangeSubscription


class LenientSubscription(RangeSubscription):
    def request(self, n: int) -> None:
        if n > 0:
            super().request(n)


class LenientRangePublisher(RangePublisher):
    subscription = LenientSubscription


target = rstck.InProcessTarget(create_publisher=LenientRangePublisher, name="mypkg range, bug planted")
