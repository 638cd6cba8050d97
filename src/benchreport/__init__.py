"""benchreport: reproducible, auditable reports for LLM-serving benchmarks."""

__version__ = "0.1.0"
