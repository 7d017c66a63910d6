"""Aggregates over a fleet dataset with PySpark in local mode: one session, a few queries.

usage: spark_aggregates.py OUT; prints one JSON line (see tests/external/parquet.rs, check_answer).
Spark does not read Parquet TIMESTAMP(NANOS) columns as timestamps; with
spark.sql.legacy.parquet.nanosAsLong it reads `log_time` as nanoseconds (a long).
"""

import json
import os
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

out = sys.argv[1]
spark = (
    SparkSession.builder.master("local[2]")
    .appName("logspec-parquet-test")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "4")
    .config("spark.sql.legacy.parquet.nanosAsLong", "true")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
nav = spark.read.parquet(os.path.join(out, "REC_NAV_SOLUTION"))
rows = (
    nav.groupBy("log")
    .agg(F.count("*"), F.sum("x"), F.min("psi"), F.max("psi"), F.min("log_time"))
    .orderBy("log")
    .collect()
)
per_log = [[r[0], r[1], r[2], float(r[3]), float(r[4]), r[5]] for r in rows]
per_channel = {}
for table in sorted(os.listdir(out)):
    per_channel[table] = spark.read.parquet(os.path.join(out, table)).count()
one_log = nav.filter(F.col("log") == "run_007").count()
spark.stop()
print(json.dumps({"per_log": per_log, "per_channel": per_channel, "one_log": one_log}))
