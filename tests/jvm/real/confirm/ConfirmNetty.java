// Shows, without the kit, what Netty's HandlerPublisher does where `rstck check 'jvm:NettyPublishers$Handler'`
// gives a verdict other than pass (the fuzz phase's 3.9 included), and why HandlerSubscriber's 2.8 is n/a in
// `jvm:NettySubscribers$Handler`. Each publisher is the last handler of a real LocalChannel, on its event loop;
// the handler before it stands for the network (a LocalChannel drops unread messages when its peer closes, so
// the server cannot send the stream's end itself). Run (a JDK 11 or later, Debian's netty-reactive-streams and netty 4.1):
//   java -cp /usr/share/java/reactive-streams.jar:/usr/share/java/netty-reactive-streams.jar:\
//   /usr/share/java/netty-transport.jar:/usr/share/java/netty-buffer.jar:/usr/share/java/netty-common.jar:\
//   /usr/share/java/netty-resolver.jar ConfirmNetty.java
// It prints one line per finding and exits 0 when each behaviour was seen as described, 1 otherwise.

import com.typesafe.netty.HandlerPublisher;
import com.typesafe.netty.HandlerSubscriber;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalServerChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

public class ConfirmNetty {
    static final EventLoopGroup LOOPS = new DefaultEventLoopGroup(2, new DefaultThreadFactory("netty-loop", true));
    static final LocalAddress SERVER = new LocalAddress("confirm-netty");

    /** Records every signal with the thread it came on; `throwOnNext` makes onNext throw, as 2.13 forbids. */
    static class Recorder implements Subscriber<Long> {
        final List<String> signals = Collections.synchronizedList(new ArrayList<>());
        final CountDownLatch subscribed = new CountDownLatch(1);
        final CountDownLatch terminated = new CountDownLatch(1);
        final boolean throwOnNext;
        volatile Subscription subscription;
        Recorder(boolean throwOnNext) { this.throwOnNext = throwOnNext; }

        String on() { return " on " + Thread.currentThread().getName(); }
        public void onSubscribe(Subscription s) { subscription = s; signals.add("onSubscribe"); subscribed.countDown(); }
        Subscription subscription() throws InterruptedException {
            subscribed.await(10, TimeUnit.SECONDS);  // onSubscribe comes on the channel's event loop
            return subscription;
        }
        public void onNext(Long item) {
            signals.add("onNext(" + item + ")" + on());
            if (throwOnNext) throw new IllegalStateException("onNext throws");
        }
        public void onError(Throwable t) { signals.add("onError(" + t + ")" + on()); terminated.countDown(); }
        public void onComplete() { signals.add("onComplete" + on()); terminated.countDown(); }
        String last() { return signals.isEmpty() ? "" : signals.get(signals.size() - 1); }
    }

    /**
     * Stands for the network: answers each read() HandlerPublisher asks for (on demand) with the next of n
     * messages, later on the event loop as a transport does, and closes the channel after the last one.
     */
    static final class Source extends ChannelOutboundHandlerAdapter {
        final long n;
        long next;
        Source(long n) { this.n = n; }

        @Override public void read(ChannelHandlerContext ctx) {
            ctx.executor().execute(() -> {
                if (!ctx.channel().isActive()) return;
                if (next < n) {
                    ctx.fireChannelRead(next++);
                    ctx.fireChannelReadComplete();
                }
                if (next >= n) ctx.close();
            });
        }
    }

    /** A HandlerPublisher of n messages, at the end of a fresh channel's pipeline, on the channel's event loop. */
    static HandlerPublisher<Long> publisherOf(long n) {
        EventLoop loop = LOOPS.next();
        HandlerPublisher<Long> publisher = new HandlerPublisher<>(loop, Long.class);
        new Bootstrap().group(loop).channel(LocalChannel.class)
                .option(ChannelOption.AUTO_READ, false)  // reads follow the subscriber's demand
                .handler(new ChannelInitializer<LocalChannel>() {
                    @Override protected void initChannel(LocalChannel channel) {
                        channel.pipeline().addLast(new Source(n), publisher);
                    }
                }).connect(SERVER).syncUninterruptibly();
        return publisher;
    }

    public static void main(String[] args) throws Exception {
        new ServerBootstrap().group(LOOPS).channel(LocalServerChannel.class)
                .childHandler(new ChannelInitializer<LocalChannel>() {
                    @Override protected void initChannel(LocalChannel accepted) {}
                }).bind(SERVER).syncUninterruptibly();
        boolean allSeen = true;
        String caller = Thread.currentThread().getName();

        // 1.11 (MAY, unsupported): a second subscriber is rejected with onSubscribe then onError.
        HandlerPublisher<Long> shared = publisherOf(4);
        Recorder first = new Recorder(false), second = new Recorder(false);
        shared.subscribe(first);
        first.subscription();
        shared.subscribe(second);
        second.terminated.await(10, TimeUnit.SECONDS);
        System.out.println("1.11 unsupported: a second subscriber got " + second.signals);
        allSeen &= second.signals.size() == 2 && second.last().startsWith(
                "onError(java.lang.IllegalStateException: This publisher only supports one subscriber)");
        first.subscription().cancel();

        // 3.9, the fuzz phase's finding (the kit's error, docs/jvm.md): a rejected subscriber that calls request(0)
        // inside onSubscribe gets the same rejection. Its onError was decided before onSubscribe was called: the
        // subscription handed to it (HandlerPublisher$1) ignores every request, as a failed publisher's may.
        HandlerPublisher<Long> taken = publisherOf(4);
        Recorder served = new Recorder(false);
        taken.subscribe(served);
        served.subscription();
        Recorder asksZero = new Recorder(false) {
            @Override public void onSubscribe(Subscription s) {
                super.onSubscribe(s);
                s.request(0);
                signals.add("request(0) returned" + on());
            }
        };
        taken.subscribe(asksZero);
        asksZero.terminated.await(10, TimeUnit.SECONDS);
        System.out.println("3.9 (fuzz) rejected, not a range error: a second subscriber that called request(0) in "
                + "onSubscribe got " + asksZero.signals);
        allSeen &= asksZero.signals.size() == 3 && asksZero.last().equals(
                "onError(java.lang.IllegalStateException: This publisher only supports one subscriber) on " + caller);
        served.subscription().cancel();

        // 2.13: onNext throws; the rule wants the subscription considered cancelled, so no further signal.
        HandlerPublisher<Long> publisher = publisherOf(4);
        Recorder throwing = new Recorder(true);
        publisher.subscribe(throwing);
        throwing.subscription().request(4);
        throwing.terminated.await(10, TimeUnit.SECONDS);
        System.out.println("2.13 fail: after onNext threw, HandlerPublisher signalled " + throwing.signals);
        allSeen &= throwing.signals.size() == 3
                && throwing.last().startsWith("onError(java.lang.IllegalStateException: onNext throws)");

        // 3.10 and 3.11 (MAY, unsupported): request() hands the demand to the event loop (executor.execute), so
        // onNext and onComplete come on the event loop's thread, never inside request() on the caller's.
        Recorder recorder = new Recorder(false);
        publisherOf(4).subscribe(recorder);
        recorder.subscription().request(5);
        recorder.terminated.await(10, TimeUnit.SECONDS);
        System.out.println("3.10, 3.11 unsupported: request(5) called on " + caller + "; then " + recorder.signals);
        allSeen &= recorder.signals.size() == 6 && recorder.last().startsWith("onComplete on netty-loop")
                && recorder.signals.get(1).startsWith("onNext(0) on netty-loop");

        // 2.8 (n/a): HandlerSubscriber cancels only when its channel closes; on an open channel it takes 64
        // elements, within its demand, without cancelling, so the check has no cancel to follow.
        EventLoop loop = LOOPS.next();
        HandlerSubscriber<Long> subscriber = new HandlerSubscriber<>(loop);
        new Bootstrap().group(loop).channel(LocalChannel.class)
                .handler(new ChannelInitializer<LocalChannel>() {
                    @Override protected void initChannel(LocalChannel channel) { channel.pipeline().addLast(subscriber); }
                }).connect(SERVER).syncUninterruptibly();
        AtomicLong demand = new AtomicLong();
        AtomicBoolean cancelled = new AtomicBoolean();
        subscriber.onSubscribe(new Subscription() {
            public void request(long n) { demand.addAndGet(n); }
            public void cancel() { cancelled.set(true); }
        });
        long delivered = 0;
        for (long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10); delivered < 64
                && System.nanoTime() < deadline; ) {
            if (demand.get() > 0) {
                demand.decrementAndGet();
                subscriber.onNext(delivered++);
            } else {
                Thread.onSpinWait();  // its requests come from the event loop, as the writes drain
            }
        }
        System.out.println("2.8 n/a: HandlerSubscriber took " + delivered + " elements on an open channel; cancelled="
                + cancelled.get());
        allSeen &= delivered == 64 && !cancelled.get();

        System.exit(allSeen ? 0 : 1);
    }
}
