"""Benchmarks on real data: run `python -m benchmarks all --corpus ../shared/corpus`."""
