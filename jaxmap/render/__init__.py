"""Pure functions from command results to output, one module per medium: text (the
terminal), json (documents whose schemas the README gives), markdown (REPO-MAP) and
map_pages (the grep pages beside it), graphs (dot, Mermaid, GraphML, pictures), csv;
editor (hover, code-lens and diagnostic texts).

explain_text is text's, for `explain` alone (its answers grew past what text.py holds).

May import: models, knowledge, errors. Never builds, queries or writes.
"""
