"""How many workers a build starts by default: the cores this process may run on."""

import os

import pytest

from jaxmap.indexing.worker import usable_cores


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no affinity on this system")
def test_a_process_held_to_one_core_starts_one_worker():
    allowed = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {min(allowed)})
        assert usable_cores() == 1
    finally:
        os.sched_setaffinity(0, allowed)
    assert usable_cores() == len(allowed)
