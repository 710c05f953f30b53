"""One module per question the front ends ask, each a function of an open store.read.Index
(or of plain arguments) returning plain data for render/.

  lookup         what a name may mean; shared by every command
  chains         the words saying how each step of a binds or path chain happens
  locate, callgraph, neighbourhood, central, coverage, diff, explain, verify,
  repomap, ladder, skill
  editor, rule_gaps  what a place in a file means, and what to flag there (jaxmap lsp)
  explain_paste, explain_formats  a paste cut into tracebacks, each as Python prints it
  explain_user, explain_releases  explain's user side (their line, their function JAX
                 called) and which release's wording a message is matched against
  review         a change between two indexes (diff BASE..HEAD), with reach and
                 message_diff

May import: store (read side), knowledge, models, roots, errors. Never build, render,
session, scaffold or the front ends: a command reads an index it is handed.
"""
