"""The index on disk: one SQLite file per root, versioned, written atomically.

  write            the schema and every write (the build side's only way in)
  records          what the build side hands it to write: a Resolution of typed records
  read             `Index`: every query a command runs, with named columns
  read_core        what the parts of `Index` build on: the connection, meta, `_in`
  read_graph       the part of `Index` for the call graph and neighbourhoods
  rows             the row types of whole-index reads
  snapshot         committed snapshots of released jax (indexes/*.json.gz)
  message_patterns a stored message template -> the regex that matches it
  atomic           the one way jaxmap replaces a file or a folder

SQL lives here and nowhere else. May import: models, knowledge, roots, errors; never
build, commands, render or the front ends. Reading never builds: session.py decides
when to.
"""
