"""Session-wide pytest hooks.

At the end of a session pytest's unraisable-exception plugin runs ``gc.collect()`` five times.
In an xdist worker that has run hundreds of tests the heap holds millions of objects, so
those collections take several seconds; execnet gives a worker 5 s to finish after the
controller asks it to exit, then sends it SIGINT, and the ``KeyboardInterrupt`` lands in
whatever Python code runs during the collection: hypothesis's gc callback, whose
"Exception ignored" traceback then appears in a passing run (issue 33). Freezing the heap
first makes those collections instant.
"""

from __future__ import annotations

import gc

import pytest


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """Move every object alive at the end of the session out of the collector's reach."""
    gc.freeze()
