"""Docs stay in step with the Makefile."""

import re


def test_every_make_target_has_help_and_a_readme_mention(project):
    makefile = (project / "Makefile").read_text()
    readme = (project / "README.md").read_text()
    phony = re.search(r"^\.PHONY: (.+)$", makefile, re.M).group(1).split()
    for target in phony:
        assert re.search(rf"^## .+\n{target}:", makefile, re.M), f"{target} has no ## help"
    for target in ("report", "test", "clean"):
        assert f"make {target}" in readme


def test_readme_starts_with_the_two_commands(project):
    readme = (project / "README.md").read_text()
    first_block = readme.split("```sh", 1)[1].split("```", 1)[0]
    assert "make report RUN=2024-b300" in first_block and "make test" in first_block


def test_ci_runs_what_the_readme_says(project):
    assert "make test" in (project / ".ci/run").read_text()
