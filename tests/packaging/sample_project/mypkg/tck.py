"""The target the CI templates check by default: the range publisher, conformant."""

import rstck

from mypkg.streams import RangePublisher

target = rstck.InProcessTarget(create_publisher=RangePublisher, name="mypkg range")
