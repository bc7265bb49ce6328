"""Result rows as a Spark DataFrame: how a run on Spark writes them (Parquet) and `rstck report --engine spark`
reads them. The Spark path keeps the fields this version knows (ROW_TYPES); a later schema's extra fields are
dropped."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rstck.execution.rows import upgrade

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# Every field of a schema-1 row, as Spark types. `deviation` (an object) is kept as its JSON text.
ROW_TYPES: dict[str, str] = {
    "schema": "bigint", "target": "string", "implementation": "string", "spec": "string", "section": "string",
    "rule": "string", "level": "string", "check": "string", "role": "string", "verdict": "string",
    "violated": "string", "duration_s": "double", "message": "string", "trace": "string", "settled_by": "string",
    "timed_out": "boolean", "node_id": "string", "seed": "string", "reason": "string", "text": "string",
    "description": "string", "replay": "string", "loaded_as": "string", "deviation": "string",
    "recorded_at": "string",
}

def row_schema() -> str:
    return ", ".join(f"`{name}` {kind}" for name, kind in ROW_TYPES.items())


def rows_frame(spark: SparkSession, rows: list[dict[str, Any]]) -> DataFrame:
    """Result rows (dicts) as a DataFrame of ROW_TYPES."""
    return spark.createDataFrame([_for_spark(upgrade(row)) for row in rows], row_schema())


def _for_spark(row: dict[str, Any]) -> tuple:
    values = []
    for name, kind in ROW_TYPES.items():
        value = row.get(name)
        if name == "deviation":
            value = None if value is None else json.dumps(value, ensure_ascii=False)
        elif kind == "string":
            value = "" if value is None else value if isinstance(value, str) else json.dumps(value)
        elif kind == "double":
            value = float(value) if isinstance(value, (int, float)) else 0.0
        elif kind == "boolean":
            value = bool(value)
        else:
            value = int(value) if isinstance(value, int) else 0
        values.append(value)
    return tuple(values)


def write_parquet(spark: SparkSession, rows: list[dict[str, Any]], path: str) -> None:
    rows_frame(spark, rows).coalesce(1).write.mode("overwrite").parquet(path)
