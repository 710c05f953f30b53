"""Two git revisions of one repository as trees jaxmap can index, without touching
the work tree.

  git          refs, ranges, changed paths and blobs, read through the git command
  materialise  a cached tree per revision, updated by the files that differ, and its
               index seeded from a sibling tree's so only changed files are parsed
  compare      a range's review: both ends indexed, then commands/review.py

May import: session (to build and open an index), commands, store, roots, errors. Never
render or the front ends.
"""
