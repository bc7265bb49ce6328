// Netty's com.typesafe.netty.HandlerPublisher (Debian's libnetty-reactive-streams-java, on Debian's netty 4.1),
// driven in-process through Netty's EmbeddedChannel: `rstck check 'jvm:NettyPublishers$Handler'`.

import com.typesafe.netty.HandlerPublisher;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import org.reactivestreams.Publisher;

public final class NettyPublishers {
    /**
     * Stands for the network: each read() the pipeline asks for (HandlerPublisher asks when its subscriber has
     * demand) delivers the next of n messages; after the last one it closes the channel, which HandlerPublisher
     * turns into onComplete.
     */
    static final class Source extends ChannelOutboundHandlerAdapter {
        final long n;
        long next;
        Source(long n) { this.n = n; }

        @Override public void read(ChannelHandlerContext ctx) {
            if (next < n) ctx.fireChannelRead(next++);
            ctx.fireChannelReadComplete();
            if (next >= n) ctx.close();
        }
    }

    // HandlerPublisher hands every subscribe, request and cancel to its executor, and an EmbeddedChannel's own
    // loop runs tasks only when its owner calls runPendingTasks(): so each publisher runs on an executor of its
    // own, as a Netty application moves a handler off the I/O thread (daemon: the kit's JVM may exit).
    static final DefaultThreadFactory HANDLER_THREADS = new DefaultThreadFactory("handler-publisher", true);

    /** A HandlerPublisher in a fresh channel behind `inbound`; the channel reads only on the publisher's demand. */
    static HandlerPublisher<Long> inChannel(EmbeddedChannel channel, ChannelOutboundHandlerAdapter inbound) {
        channel.config().setAutoRead(false);
        EventExecutor executor = new DefaultEventExecutor(HANDLER_THREADS);
        HandlerPublisher<Long> publisher = new HandlerPublisher<>(executor, Long.class);
        channel.pipeline().addLast(inbound);
        channel.pipeline().addLast(executor, "publisher", publisher);
        return publisher;
    }

    public static final class Handler {
        public Publisher<Long> createPublisher(long n) {
            EmbeddedChannel channel = new EmbeddedChannel();
            HandlerPublisher<Long> publisher = inChannel(channel, new Source(n));
            if (n == 0) channel.close();  // nothing to read: the connection ends at once
            return publisher;
        }
        public Publisher<Long> createFailedPublisher() {
            EmbeddedChannel channel = new EmbeddedChannel();
            HandlerPublisher<Long> publisher = inChannel(channel, new ChannelOutboundHandlerAdapter());
            channel.pipeline().fireExceptionCaught(new IllegalStateException("connection reset"));
            return publisher;
        }
        public long maxElementsFromPublisher() { return Long.MAX_VALUE - 1; }
    }
}
