"""Benchmarks for harkback: retrieval quality on LongMemEval-format data, and timing."""
