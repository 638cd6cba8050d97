"""The shared core every stage may import: errors, value types, figures and their
registry, paths, the derived tables' schema and loader, run.yaml, wording catalogues."""
