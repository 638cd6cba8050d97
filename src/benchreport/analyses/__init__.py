"""Stage 2, analyses: one pure module per topic, from the derived tables to figures."""
