"""Ready-made targets for the Spark reference implementations:
`rstck check rstck.reference.spark_targets:spark_publisher` (and `:spark_sink`).

Importing this module imports no pyspark; the session starts when a check run prepares the target.
"""

from __future__ import annotations

from rstck.adapters.spark import SparkTarget
from rstck.protocols.spark import warm_up_parquet
from rstck.reference.spark import DataFrameSink

# The rows of spark.range(n), pulled as demand arrives; a failed publisher whose job raises.
spark_publisher = SparkTarget(name="reference Spark DataFrame publisher")

# Writes batches of sixteen rows as Parquet into a fresh directory per check (a write takes about half a
# second on a 2-core machine, and several times that on one loaded fourfold: a check's 32 elements, two
# writes, fit its deadline either way); it tells the kit's observer when it has processed each signal
# (white box).
spark_sink = SparkTarget(
    create_whitebox_subscriber=lambda spark, observer: DataFrameSink(
        spark, spark_sink.scratch_path("sink"), batch_size=16, executor=spark_sink.executor, observer=observer),
    name="reference Spark Parquet sink", warm_up=warm_up_parquet,
)
