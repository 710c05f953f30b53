"""Indexing a tree: discover -> skim -> parse -> extract -> resolve -> (flow) -> store.

  discover   the Python files of a root, with module names (and those left out, why)
  decode     a source's bytes as Python reads them (PEP 263, BOM), as UTF-8
  skim       where bodies lie, read from text (no parse)
  parse      the one tree-sitter set-up; its queries are patterns/*.scm
  extract    one file's syntax tree -> its facts (facts.py is the schema; nodevalues
             reads expressions, calltext what the call graph reads of the text)
  messages   the error messages a file raises, read from its text
  worker     extracting files, in this process or forked helpers
  moves      an edit that only moved code told from one that changed it, and the
             lines' map
  carry      the call graph carried over an update that resolves the first phase
  resolve/   the facts of a whole tree -> primitives, rules, definitions, import edges
  indexer    the pipeline, incremental, written through store/write.py
  builder    a server's build process (`python -m jaxmap.indexing.builder`)

May import: flow (the indexer and the extraction run it), store (to write), knowledge,
models, roots, errors. Never commands, render, scaffold, session or the front ends.
"""
