// Netty's com.typesafe.netty.HandlerPublisher (Debian's libnetty-reactive-streams-java, on Debian's netty 4.1),
// used as a Netty application uses it: `rstck check 'jvm:NettyPublishers$Handler'`. Each publisher is the last
// handler of a real LocalChannel, connected to an in-JVM server, on a DefaultEventLoopGroup's event loop; the
// publisher runs on its channel's event loop, so every handler call stays on one thread, as Netty requires.

import com.typesafe.netty.HandlerPublisher;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalServerChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.reactivestreams.Publisher;

public final class NettyPublishers {
    /**
     * Stands for the network: each read() the pipeline asks for (HandlerPublisher asks when its subscriber has
     * demand) delivers the next of n messages; after the last one it closes the channel, which HandlerPublisher
     * turns into onComplete. As a real transport does, it answers read() later, in a task of the channel's event
     * loop, never inside read(): HandlerPublisher asks for the next read from channelReadComplete.
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

    // Daemon threads: the kit's JVM may exit while channels are open.
    static final EventLoopGroup LOOPS = new DefaultEventLoopGroup(2, new DefaultThreadFactory("netty-loop", true));
    static final LocalAddress SERVER = new LocalAddress("rstck-netty-publishers");

    static {
        // The peer every channel here connects to: it sends nothing (Source stands for the publisher's data), and
        // NettySubscribers' writes reach the end of its pipeline, which discards them.
        new ServerBootstrap().group(LOOPS).channel(LocalServerChannel.class)
                .childHandler(new ChannelInitializer<LocalChannel>() {
                    @Override protected void initChannel(LocalChannel accepted) {}
                }).bind(SERVER).syncUninterruptibly();
    }

    /**
     * A HandlerPublisher on the event loop of a fresh channel it ends the pipeline of, after `before`. It does
     * not wait for the connection: HandlerPublisher accepts a subscriber before it has a channel, and a factory
     * called on an event loop must not block it.
     */
    static HandlerPublisher<Long> inChannel(ChannelHandler before) {
        EventLoop loop = LOOPS.next();
        HandlerPublisher<Long> publisher = new HandlerPublisher<>(loop, Long.class);
        new Bootstrap().group(loop).channel(LocalChannel.class)
                .option(ChannelOption.AUTO_READ, false)  // the channel reads only on the publisher's demand
                .handler(new ChannelInitializer<LocalChannel>() {
                    @Override protected void initChannel(LocalChannel channel) {
                        channel.pipeline().addLast(before, publisher);
                    }
                }).connect(SERVER);
        return publisher;
    }

    public static final class Handler {
        public Publisher<Long> createPublisher(long n) {
            return inChannel(new Source(n));
        }
        public Publisher<Long> createFailedPublisher() {
            return inChannel(new ChannelInboundHandlerAdapter() {
                @Override public void channelActive(ChannelHandlerContext ctx) {
                    ctx.fireChannelActive();
                    ctx.fireExceptionCaught(new IllegalStateException("connection reset"));  // fails at once
                }
            });
        }
        public long maxElementsFromPublisher() { return Long.MAX_VALUE - 1; }
    }
}
