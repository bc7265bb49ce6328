"""Result rows on Spark: rows as a DataFrame (Parquet or JSON Lines), merged with Spark SQL, and the
pass rate over time per item and implementation.

`rstck report --engine spark` reads histories too large for one process (many implementations, many
nightly runs): Spark SQL keeps the newest row of each check (the same merge as `rows.merge`) and counts
pass rates per day; only the merged rows, one per check, come back to the driver for the page. The
Spark path keeps the fields this version knows (ROW_TYPES); a later schema's extra fields are dropped.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import pathlib
from typing import TYPE_CHECKING, Any

from rstck.core.verdict import BadInput
from rstck.execution.rows import FIELD_DEFAULTS, Loaded, upgrade
from rstck.execution.spark_rows import ROW_TYPES, row_schema

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_KEY = ("implementation", "target", "spec", "rule", "check", "role")
# Verdicts that decide a pass rate; n/a, untested and unsupported say nothing about passing.
DECISIVE = ("pass", "fail", "error", "warn", "allowed")
HISTORY_DAYS = 14  # columns of the pass-rate table in the page (the CSV beside it has every day)
HISTORY_LINES = 2_000  # lines of it in the page


# -- reading -------------------------------------------------------------------------------------

def _inputs(paths: list[str]) -> tuple[list[str], list[str]]:
    """The JSON Lines files and Parquet datasets named (a directory: the *.jsonl and *.parquet in it, or
    itself when it is a Parquet dataset). Paths with a scheme (hdfs://, s3a://) go by their ending."""
    jsonl: list[str] = []
    parquet: list[str] = []
    for name in paths:
        if "://" in name and not name.startswith("file://"):
            (jsonl if name.endswith((".jsonl", ".json")) else parquet).append(name)
            continue
        path = pathlib.Path(name.removeprefix("file://"))
        if path.is_dir():
            if _is_parquet_dataset(path):
                parquet.append(str(path))
                continue
            found_jsonl = sorted(str(p) for p in path.glob("*.jsonl"))
            found_parquet = sorted(str(p) for p in path.glob("*.parquet"))
            if not found_jsonl and not found_parquet:
                raise BadInput(f"{path}: no *.jsonl or *.parquet result files in this directory")
            jsonl += found_jsonl
            parquet += found_parquet
        elif path.is_file():
            (parquet if path.suffix == ".parquet" else jsonl).append(str(path))
        else:
            raise BadInput(f"{path}: no such file or directory")
    return list(dict.fromkeys(jsonl)), list(dict.fromkeys(parquet))


def _is_parquet_dataset(path: pathlib.Path) -> bool:
    return path.suffix == ".parquet" or any(path.glob("part-*.parquet")) or (path / "_SUCCESS").exists()


def read_frame(spark: SparkSession, paths: list[str]) -> tuple[DataFrame, list[str], list[str]]:
    """Every row of the files named, as one DataFrame of ROW_TYPES; notes; the sources read. A JSON line
    that is not a result row (not JSON, or no target, rule or verdict) is left out and counted."""
    from pyspark.sql import functions as F

    jsonl, parquet = _inputs(paths)
    frames = []
    notes: list[str] = []
    if jsonl:
        raw = (spark.read.schema(f"{row_schema()}, `_corrupt` string")
               .option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", "_corrupt").json(jsonl))
        raw = raw.cache()  # a query may not touch only the corrupt-record column of uncached JSON
        valid = F.col("_corrupt").isNull() & F.col("target").isNotNull() & F.col("rule").isNotNull() \
            & F.col("verdict").isNotNull()
        left_out = raw.where(~valid).count()
        if left_out:
            notes.append(f"{left_out} line{'s' * (left_out != 1)} of the JSON Lines files left out: not result rows")
        frames.append(_filled(raw.where(valid).drop("_corrupt")))
    for path in parquet:
        frames.append(_filled(spark.read.parquet(path)))
    frame = frames[0]
    for other in frames[1:]:
        frame = frame.unionByName(other)
    return frame, notes, jsonl + parquet


def _filled(frame: DataFrame) -> DataFrame:
    """ROW_TYPES' columns in order: defaults where a row or a file lacks one, as `rows.upgrade` fills them."""
    from pyspark.sql import functions as F

    columns = []
    for name, kind in ROW_TYPES.items():
        if name in frame.columns:
            column = F.col(f"`{name}`").cast(kind)
        else:
            column = F.lit(None).cast(kind)
        default = FIELD_DEFAULTS.get(name, 0 if name == "schema" else "")
        if name != "deviation":
            column = F.coalesce(column, F.lit(default).cast(kind))
        columns.append(column.alias(name))
    filled = frame.select(*columns)
    # Rows of schema 0 have no implementation: their target, less a processor view's suffix.
    unnamed = F.col("implementation") == ""
    implementation = F.when(unnamed, F.regexp_replace("target", r" \(processor as \w+\)$", "")) \
        .otherwise(F.col("implementation"))
    return filled.withColumn("implementation", implementation)


# -- merging and the history ---------------------------------------------------------------------

def merged(frame: DataFrame) -> tuple[DataFrame, int]:
    """One row per check (rows.check_key), the newest by recorded_at; how many other rows gave way (an exact
    repeat is not counted). One aggregation: the newest row and the number of distinct rows per check."""
    from pyspark.sql import functions as F

    fuzz = F.col("check").startswith("fuzz-")
    columns = list(ROW_TYPES)
    keyed = (frame.withColumn("_violated", F.when(fuzz, F.col("violated")).otherwise(F.lit("")))
             .withColumn("_seed", F.when(fuzz, F.col("seed")).otherwise(F.lit("")))
             .withColumn("_hash", F.xxhash64(*columns)))
    grouped = (keyed.groupBy(*_KEY, "_violated", "_seed")
               .agg(F.max_by(F.struct(*columns), "recorded_at").alias("_row"),
                    F.count_distinct("_hash").alias("_versions"))
               .cache())
    superseded = grouped.agg(F.sum(F.col("_versions") - 1)).first()[0] or 0
    return grouped.select("_row.*"), int(superseded)


@dataclasses.dataclass
class PassRates:
    """Passes among decisive verdicts per item and implementation, per day (of recorded_at)."""

    days: list[str]  # the days shown, oldest first
    lines: list[tuple[str, str, list[str], str]]  # implementation, item, a cell per day, the whole period
    counts: list[tuple[str, str, str, int, int]]  # implementation, item, day, passed, decided: every day
    cut: int = 0  # lines left out of the page

    def write_csv(self, path: str | pathlib.Path) -> pathlib.Path:
        path = pathlib.Path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("w", newline="", encoding="utf-8") as out:
                writer = csv.writer(out)
                writer.writerow(["implementation", "item", "day", "passed", "decided", "pass_rate"])
                for implementation, item, day, passed, decided in self.counts:
                    writer.writerow([implementation, item, day, passed, decided, f"{passed / decided:.4f}"])
        except OSError as exc:
            raise BadInput(f"{path}: cannot write the pass-rate table ({exc.strerror})") from exc
        return path


def pass_rates(frame: DataFrame, days: int = HISTORY_DAYS, lines: int = HISTORY_LINES) -> PassRates:
    frame.createOrReplaceTempView("rstck_rows")
    spark = frame.sparkSession
    counted = spark.sql(f"""
        SELECT implementation, CASE WHEN violated <> '' THEN violated ELSE rule END AS item,
               CASE WHEN recorded_at = '' THEN 'undated' ELSE substr(recorded_at, 1, 10) END AS day,
               sum(CASE WHEN verdict = 'pass' THEN 1 ELSE 0 END) AS passed, count(*) AS decided
        FROM rstck_rows
        WHERE rule <> '' AND verdict IN ({", ".join(f"'{v}'" for v in DECISIVE)})
        GROUP BY 1, 2, 3
        ORDER BY 1, 2, 3""").collect()
    counts = [(r.implementation, r.item, r.day, int(r.passed), int(r.decided)) for r in counted]
    shown_days = sorted({day for _, _, day, _, _ in counts})[-days:]
    by_line: dict[tuple[str, str], dict[str, tuple[int, int]]] = {}
    for implementation, item, day, passed, decided in counts:
        by_line.setdefault((implementation, item), {})[day] = (passed, decided)
    table = []
    for (implementation, item), per_day in sorted(by_line.items(), key=lambda kv: (kv[0][0], _item_order(kv[0][1]))):
        cells = [_rate(*per_day[day]) if day in per_day else "" for day in shown_days]
        passed = sum(p for p, _ in per_day.values())
        decided = sum(d for _, d in per_day.values())
        table.append((implementation, item, cells, _rate(passed, decided)))
    return PassRates(shown_days, table[:lines], counts, cut=max(0, len(table) - lines))


def _rate(passed: int, decided: int) -> str:
    return f"{100 * passed / decided:.0f}%" if decided else ""


def _item_order(item: str) -> list[tuple[int, int | str]]:
    return [(0, int(part)) if part.isdigit() else (1, part) for part in item.replace("-", ".").split(".")]


def aggregate(paths: list[str], *, master: str | None = None) -> tuple[Loaded, PassRates]:
    """`rstck report --engine spark`: the merged rows (as `rows.read_rows` gives them) and the pass rates."""
    from rstck.protocols.spark import spark_session

    spark = spark_session(master)
    frame, notes, sources = read_frame(spark, paths)
    frame = frame.cache()
    newest, superseded = merged(frame)
    if superseded:
        notes.append(f"{superseded} row{'s' * (superseded != 1)} of older runs superseded by newer rows of the "
                     "same check")
    rows = [_from_spark(row.asDict()) for row in newest.collect()]
    history = pass_rates(frame)
    return Loaded(rows, notes, sources), history


def _from_spark(row: dict[str, Any]) -> dict[str, Any]:
    deviation = row.get("deviation")
    if deviation:
        try:
            row["deviation"] = json.loads(deviation)
        except ValueError:
            row["deviation"] = None
    return upgrade(row)
