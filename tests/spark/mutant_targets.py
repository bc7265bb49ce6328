"""The Spark-backed mutants of mutants.py as targets (`rstck check tests.spark.mutant_targets:ignores_request_zero`),
each with the conformant implementation it was made from: its fixed version."""

from __future__ import annotations

from rstck.adapters.spark import SparkTarget

from tests.spark import mutants

rows_publisher = SparkTarget(create_publisher=mutants.RowsPublisher, name="Spark rows publisher")
ignores_request_zero = SparkTarget(create_publisher=mutants.IgnoresRequestZero, name="Spark rows publisher, ignores "
                                   "request(0)")
delivers_one_more = SparkTarget(create_publisher=mutants.DeliversOneMore, name="Spark rows publisher, delivers one "
                                "more")
table_sink = SparkTarget(create_subscriber=mutants.TableSink, name="Spark table sink")
never_requests = SparkTarget(create_subscriber=mutants.NeverRequests, name="Spark table sink, never requests")
