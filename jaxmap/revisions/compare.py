"""A review of a range of one repository: its two ends indexed from git (materialise),
then compared (commands/review.py). The one call `jaxmap diff BASE..HEAD` makes."""

from __future__ import annotations

from jaxmap.commands import review as review_mod
from jaxmap.revisions import git, materialise
from jaxmap.session import only_moved


def review_range(repo_path: str, range_text: str, open_tree=None) -> review_mod.Review:
    """The review of `range_text` (`BASE..HEAD` or `BASE...HEAD`) in the repository at
    `repo_path`; `open_tree(root)` builds and opens a tree's index (materialise's
    default when None)."""
    repo = git.open_repo(repo_path)
    ends = git.parse_range(repo, range_text)
    files = [blob.path for blob in git.changed_python_files(repo, ends.base, ends.head)]
    base, head = review_mod.Side(ends.base_ref, ends.base), review_mod.Side(ends.head_ref,
                                                                            ends.head)
    if not files:  # answered at once: no tree is laid or indexed
        return review_mod.unchanged(base, head)
    before, after = materialise.indexes(repo, [ends.base, ends.head], open_tree)
    try:
        return review_mod.review(base, before, head, after, files,
                                 moved_only=only_moved(before, after, files),
                                 edits=git.changed_lines(repo, ends.base, ends.head))
    finally:
        before.close()
        if after is not before:
            after.close()
