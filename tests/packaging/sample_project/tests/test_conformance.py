import rstck

from mypkg.tck import target


class TestRangePublisher(rstck.PublisherVerification):
    target = target
