"""The JVM bridge: a JVM of the kit's own, started with the user's classpath and driven through py4j's
pinned-thread ClientServer (`process`), the Python stand-ins of Java publishers and subscriptions and the Java
proxies of the kit's probes (`proxies`), Java exceptions as Python ones (`errors`), and the JVM's threads as
settling reads them (`threads`). docs/jvm.md."""
