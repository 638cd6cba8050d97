"""Stage 3, publish: the article's sentences, sections, charts, HTML, PDF and blog
export, from figures and derived tables only."""
