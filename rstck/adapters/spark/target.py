"""The Spark adapter: Reactive Streams verifications against implementations whose publishers read
DataFrames and whose subscribers write them.

A `SparkTarget` is an in-process target whose factories are also handed the Spark session. The
session is the process's own (`rstck.protocols.spark.spark_session`): embedded `local[*]` unless
`master=` or $RSTCK_SPARK_MASTER (`rstck check --spark-master URL`) names a cluster. It starts in
`prepare()`, before the first check, so no check's deadline pays for starting a JVM; a session that
cannot start is bad input for `rstck check` (one line: no Java, a master that does not answer, a
start past its deadline) and an `error` verdict for each check under pytest.

Settling needs nothing Spark-specific: the reference implementations run their Spark jobs as tasks on
`target.executor`, which settling waits for exactly, and a job is bounded by its own timeout.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from typing import TYPE_CHECKING, Any, Callable

from rstck.protocols.spark import JOB_TIMEOUT_S, START_TIMEOUT_S, SparkUnavailable, spark_session
from rstck.core.session import Session
from rstck.core.settle import DEFAULT_DEADLINE_S, RESPONSIVENESS_BOUND_S
from rstck.core.target import PYTHON, ErrorNames, plain_executor
from rstck.adapters.inprocess.target import InProcessTarget

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["SparkTarget"]

# Why a publisher of create_dataframe gets no reproducer: it is the kit's own.
NO_SCRIPT_OF_DATAFRAMES = ("the publisher is rstck's DataFramePublisher (create_dataframe), which a script cannot use "
                           "without rstck: give create_publisher(spark, n) to get reproducers")


def _range(spark: SparkSession, n: int) -> DataFrame:
    return spark.range(n)


def _failing(spark: SparkSession) -> DataFrame:
    from pyspark.sql import functions

    return spark.range(1).select(functions.raise_error(functions.lit("the failed DataFrame fails on purpose")))


class SparkTarget(InProcessTarget):
    """A target whose factories take the Spark session as their first argument.

    create_dataframe(spark, n): a DataFrame of exactly n rows, published by `DataFramePublisher`
        (on the kit's executor). The default, when no publisher or subscriber factory is given at
        all, is `spark.range(n)`.
    create_failed_dataframe(spark): a DataFrame whose job fails: its publisher signals on_error.
        Defaults to one that raises (`raise_error`) when create_dataframe is the default.
    create_publisher(spark, n), create_failed_publisher(spark): any publisher (your own Spark-backed
        one); instead of the DataFrame factories.
    create_subscriber(spark), create_whitebox_subscriber(spark, observer), create_processor(spark):
        as for InProcessTarget, with the session.
    master: the Spark master (default: $RSTCK_SPARK_MASTER, else local[*]).
    fuzz_phase: whether `rstck check` fuzzes after the checks (off by default: every example starts
        Spark jobs; `rstck fuzz` fuzzes it anyway).
    warm_up(spark): run once after the session starts, before any check: the first job of a kind
        (the first Parquet write takes seconds more than the next) is then not paid in a check's deadline.

    `scratch_path(name)` gives a fresh path under a directory of the target's own, removed when the
    check that asked for it ends: where a sink under test may write.
    """

    def __init__(self, create_dataframe: Callable[[SparkSession, int], DataFrame] | None = None, *,
                 create_failed_dataframe: Callable[[SparkSession], DataFrame] | None = None,
                 create_publisher: Callable[[SparkSession, int], Any] | None = None,
                 create_failed_publisher: Callable[[SparkSession], Any] | None = None,
                 create_subscriber: Callable[[SparkSession], Any] | None = None,
                 create_whitebox_subscriber: Callable[[SparkSession, Any], Any] | None = None,
                 create_processor: Callable[[SparkSession], Any] | None = None,
                 max_elements: int | None = None, master: str | None = None, name: str | None = None,
                 start_timeout_s: float = START_TIMEOUT_S, job_timeout_s: float = JOB_TIMEOUT_S,
                 quiet_period_s: float | None = None, responsiveness_bound_s: float = RESPONSIVENESS_BOUND_S,
                 error_names: ErrorNames = PYTHON, fuzz_phase: bool = False, profile: ErrorNames | None = None,
                 warm_up: Callable[[SparkSession], Any] | None = None):
        if create_dataframe is not None and create_publisher is not None:
            raise TypeError("SparkTarget: give create_dataframe or create_publisher, not both")
        if not any((create_dataframe, create_publisher, create_subscriber, create_whitebox_subscriber,
                    create_processor)):
            create_dataframe = _range
            create_failed_dataframe = create_failed_dataframe or _failing
        self.master = master
        self.warm_up = warm_up
        self.start_timeout_s = start_timeout_s
        self.job_timeout_s = job_timeout_s
        self._spark: SparkSession | None = None
        self._unavailable: SparkUnavailable | None = None
        self._scratch: str | None = None
        self._scratch_numbers = itertools.count(1)
        self._scratch_by_session: dict[int, list[str]] = {}

        # The user's own factories, which take the session first: a reproducer imports them (when they have names
        # of their own) and hands them a session it starts itself.
        self._takes_session: dict[Callable[..., Any], Callable[..., Any]] = {}  # what the kit calls -> the user's

        def with_session(factory: Callable[..., Any] | None) -> Callable[..., Any] | None:
            if factory is None:
                return None

            def handed(*args: Any) -> Any:
                return factory(self.spark, *args)

            self._takes_session[handed] = factory
            return handed

        def published(factory: Callable[..., DataFrame] | None) -> Callable[..., Any] | None:
            if factory is None:
                return None
            # The one entry point that offers a reference implementation (docs/architecture.md): a DataFrame
            # is published by the reference DataFramePublisher.
            from rstck.reference.spark import DataFramePublisher

            def publisher(*args: Any) -> Any:
                session = self._session_of_this_thread()
                if session is not None:
                    session.evidence.cannot(NO_SCRIPT_OF_DATAFRAMES)
                executor = plain_executor() if session is None else session.executor
                return DataFramePublisher(factory(self.spark, *args), executor=executor,
                                          job_timeout_s=self.job_timeout_s)

            return publisher

        super().__init__(
            create_publisher=published(create_dataframe) or with_session(create_publisher),
            create_failed_publisher=published(create_failed_dataframe) or with_session(create_failed_publisher),
            max_elements=max_elements, create_subscriber=with_session(create_subscriber),
            create_whitebox_subscriber=with_session(create_whitebox_subscriber),
            create_processor=with_session(create_processor), name=name or "Spark target",
            quiet_period_s=quiet_period_s, responsiveness_bound_s=responsiveness_bound_s,
            error_names=profile or error_names,  # `profile`: the former name of `error_names`
            calls_in_loop=False)  # Spark code is synchronous: no event loop needed around its calls
        self.fuzz_phase = fuzz_phase

    @property
    def spark(self) -> SparkSession:
        """The Spark session (started on first use)."""
        if self._spark is None:
            if self._unavailable is not None:
                raise self._unavailable
            spark = spark_session(self.master, start_timeout_s=self.start_timeout_s)
            if self.warm_up is not None:
                self.warm_up(spark)
            self._spark = spark
        return self._spark

    def prepare(self) -> None:
        try:
            self.spark
        except SparkUnavailable as exc:
            self._unavailable = exc
            raise

    def open_session(self, deadline_s: float = DEFAULT_DEADLINE_S) -> Session:
        try:
            self.prepare()  # under pytest, the first check starts it (before its deadline runs)
        except SparkUnavailable:
            pass  # each factory then raises it: an error verdict, never the rule's fault
        session = super().open_session(deadline_s)
        session.evidence.settings["spark"] = self.master or ""  # a reproducer starts a session on this master
        return session

    def scripted_factory(self, name: str, factory: Callable[..., Any]) -> Any:
        return self._takes_session.get(factory, factory)

    def scratch_path(self, name: str = "out") -> str:
        """A path that does not exist yet, removed (with what was written there) when the check ends."""
        if self._scratch is None:
            self._scratch = tempfile.mkdtemp(prefix="rstck-spark-")
        path = os.path.join(self._scratch, f"{name}-{next(self._scratch_numbers)}")
        session = self._active
        if session is not None:
            self._scratch_by_session.setdefault(id(session), []).append(path)
        return path

    def session_closed(self, session: Session) -> None:
        super().session_closed(session)
        for path in self._scratch_by_session.pop(id(session), []):
            shutil.rmtree(path, ignore_errors=True)
