"""The JVM adapter: Java implementations of `java.util.concurrent.Flow` (and of `org.reactivestreams` where its
jar is on the classpath), checked through a JVM of the kit's own (docs/jvm.md).

`rstck check jvm:CLASS --classpath PATHS` makes an instance of CLASS (a public no-argument constructor) and calls
the JVM TCK's factory names on it: createFlowPublisher(long) or createPublisher(long), createFailedFlowPublisher()
or createFailedPublisher(), maxElementsFromPublisher(), boundedDepthOfOnNextAndRequestRecursion().
`target.JvmTarget` is the target; the bridge (the JVM, py4j, the stand-ins) is `rstck.protocols.jvm`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rstck.core.plugins import Adapter, TargetOption

if TYPE_CHECKING:  # importing this package stays light: it is the plug-in's description
    from rstck.adapters.jvm.target import JvmTarget

JVM_PREFIX = "jvm:"
CLASSPATH_ENV = "RSTCK_CLASSPATH"


def _rerun(spec: str) -> list[str]:
    import os

    classpath = os.environ.get(CLASSPATH_ENV)
    return [spec, "--classpath", classpath] if classpath else [spec]


ADAPTER = Adapter(
    name="jvm",
    schemes=(JVM_PREFIX,),
    loader="rstck.adapters.jvm:jvm_target",
    describes="jvm:CLASS for a Java class with the JVM TCK's factory methods, with --classpath (docs/jvm.md)",
    options=(TargetOption("--classpath", "PATHS", "the classpath of jvm: targets, entries separated by ':' "
                          f"(default: ${CLASSPATH_ENV}; docs/jvm.md)", env=CLASSPATH_ENV),),
    rerun=_rerun,
    reproducers={JVM_PREFIX: "jvm"},  # a Python script that drives the class through py4j (docs/reproducers.md)
)

__all__ = ["ADAPTER", "CLASSPATH_ENV", "JVM_PREFIX", "JvmTarget", "jvm_target"]


def __getattr__(name: str):
    if name == "JvmTarget":  # loaded only when asked for
        from rstck.adapters.jvm.target import JvmTarget

        return JvmTarget
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def jvm_target(spec: str) -> JvmTarget | None:
    """The JVM target `spec` names (jvm:CLASS), on the classpath $RSTCK_CLASSPATH (set by --classpath)."""
    if not spec.startswith(JVM_PREFIX):
        return None
    import os

    from rstck.adapters.jvm.target import JvmTarget

    classpath = [entry for entry in os.environ.get(CLASSPATH_ENV, "").split(os.pathsep) if entry]
    return JvmTarget(spec[len(JVM_PREFIX):], classpath=classpath, name=spec)
