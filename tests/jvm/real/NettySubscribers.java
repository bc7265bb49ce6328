// Netty's com.typesafe.netty.HandlerSubscriber (Debian's libnetty-reactive-streams-java, on Debian's netty 4.1),
// used as a Netty application uses it: `rstck check 'jvm:NettySubscribers$Handler'`. Each subscriber is the last
// handler of a real LocalChannel connected to the in-JVM server of NettyPublishers, on the channel's event loop;
// it writes each element it gets to the channel, and the server discards them.

import com.typesafe.netty.HandlerSubscriber;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.local.LocalChannel;
import org.reactivestreams.Subscriber;

public final class NettySubscribers {
    public static final class Handler {
        /**
         * Does not wait for the connection: HandlerSubscriber accepts onSubscribe before it has a channel, and
         * requests once the channel is active (by default 16 elements, more as writes drain below 4).
         */
        public Subscriber<Long> createSubscriber() {
            EventLoop loop = NettyPublishers.LOOPS.next();
            HandlerSubscriber<Long> subscriber = new HandlerSubscriber<>(loop);
            new Bootstrap().group(loop).channel(LocalChannel.class)
                    .handler(new ChannelInitializer<LocalChannel>() {
                        @Override protected void initChannel(LocalChannel channel) {
                            channel.pipeline().addLast(subscriber);
                        }
                    }).connect(NettyPublishers.SERVER);
            return subscriber;
        }
        public Long createElement(int i) { return (long) i; }
    }
}
