import rstck

from mypkg.planted_bug import target


class TestLenientRangePublisher(rstck.PublisherVerification):
    target = target
