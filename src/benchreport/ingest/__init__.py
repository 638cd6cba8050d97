"""Stage 1, ingest: read every raw file (parsers), find each benchmark's window, and
write the derived tables. Nothing after this stage opens data/<RUN>/raw/."""
