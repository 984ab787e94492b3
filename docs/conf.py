"""Sphinx configuration of the documentation site: the Markdown pages of docs/, read by MyST.

    pip install '.[docs]'
    python -m sphinx -W -b html docs docs/_build/html

tests/python/test_docs_site.py builds it with warnings as errors.
"""

project = "flashlife"
author = "the flashlife authors"
copyright = "the flashlife authors, MIT licence"

extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

# `## Heading` anchors, so that links such as python.md#sweeps resolve.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

html_theme = "alabaster"
html_title = "flashlife"
