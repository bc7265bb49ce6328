"""The Spark adapter: implementations whose publishers read DataFrames and whose subscribers write them
(`target.SparkTarget`, an in-process target named as MODULE:ATTR; docs/spark.md)."""

from __future__ import annotations

from rstck.core.plugins import Adapter, TargetOption

ADAPTER = Adapter(
    name="spark",
    options=(TargetOption("--spark-master", "URL", "the Spark master for Spark targets, e.g. spark://host:7077 "
                          "(default: $RSTCK_SPARK_MASTER, else an embedded local[*] session; docs/spark.md)",
                          env="RSTCK_SPARK_MASTER"),),
)

__all__ = ["ADAPTER", "SparkTarget"]


def __getattr__(name: str):
    if name == "SparkTarget":  # loaded only when asked for: the plug-in's description stays light
        from rstck.adapters.spark.target import SparkTarget

        return SparkTarget
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
