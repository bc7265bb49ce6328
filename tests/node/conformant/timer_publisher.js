'use strict';
// A publisher whose elements come on timers (setTimeout), a few per timer, written as a factory of plain
// objects; and a white-box subscriber that reports to the kit's observer once it has processed each signal.

function createPublisher(total) {
  return {
    subscribe(subscriber) {
      if (subscriber == null) throw new TypeError('subscribe(null)');
      const state = { next: 0, demand: 0, open: true, timer: null, subscriber };
      const close = () => {
        state.open = false;
        state.subscriber = null;
        if (state.timer !== null) clearTimeout(state.timer);
        state.timer = null;
      };
      const tick = () => {
        state.timer = null;
        for (let k = 0; k < 4 && state.open && state.demand > 0 && state.next < total; k += 1) {
          state.demand -= 1;
          state.next += 1;
          const subscriber = state.subscriber;
          try {
            subscriber.onNext(`element ${state.next}`);
          } catch (err) {
            close(); // 2.13: a subscriber whose onNext threw counts as cancelled; the error is the timer's to surface
            throw err;
          }
        }
        if (!state.open) return;
        if (state.next >= total) {
          const done = state.subscriber;
          close();
          done.onComplete();
        } else if (state.demand > 0) {
          state.timer = setTimeout(tick, 0);
        }
      };
      const arm = () => {
        if (state.open && state.timer === null) state.timer = setTimeout(tick, 0);
      };
      subscriber.onSubscribe({
        request(n) {
          if (!state.open) return;
          const count = Number(n);
          if (!(count > 0)) {
            const failed = state.subscriber;
            close();
            setTimeout(() => failed.onError(new RangeError(`request(${n}): must be > 0`)), 0);
            return;
          }
          state.demand = state.demand + count > Number.MAX_SAFE_INTEGER ? Infinity : state.demand + count;
          arm();
        },
        cancel: close,
      });
      if (total === 0) arm();
    },
  };
}

function createWhiteboxSubscriber(observer) {
  // Asks for four elements at a time, the next four once it has processed the last of them.
  let subscription = null;
  let ended = false;
  let left = 0;
  return {
    onSubscribe(s) {
      if (s == null) throw new TypeError('onSubscribe(null)');
      if (subscription !== null) {
        s.cancel();
        return;
      }
      subscription = s;
      left = 4;
      s.request(4);
      observer.onSubscribeProcessed();
    },
    onNext(element) {
      if (element == null) throw new TypeError('onNext(null)');
      observer.onNextProcessed(element);
      left -= 1;
      if (left === 0 && !ended) {
        left = 4;
        subscription.request(4);
      }
    },
    onError(error) {
      if (error == null) throw new TypeError('onError(null)');
      ended = true;
      observer.onErrorProcessed(error);
    },
    onComplete() {
      ended = true;
      observer.onCompleteProcessed();
    },
  };
}

module.exports = { createPublisher, createWhiteboxSubscriber };
