'use strict';
// 2.1 broken on purpose: a subscriber that never requests anything.
class IdleSubscriber {
  onSubscribe(subscription) {
    this.subscription = subscription;
  }

  onNext() {}

  onError() {}

  onComplete() {}
}

module.exports = { createSubscriber: () => new IdleSubscriber() };
