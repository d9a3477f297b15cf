"""Benchmarks: each prints one table of ratios against peers measured in the same run."""
