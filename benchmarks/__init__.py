"""Benchmarks for harkback: retrieval quality on LongMemEval-format data, and timing.

They run in UTC wherever they are run: a question's days ("3 days ago", "yesterday") and
an ``--as-of`` date are local days (:mod:`harkback.stages.local_days`), and the figures
published were measured with UTC days.
"""

import os
import time

os.environ["TZ"] = "UTC"
time.tzset()
