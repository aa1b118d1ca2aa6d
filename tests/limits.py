"""Time limits of the default suite's solver calls (issue 33: tests that pass on a busy machine).

No verdict of the default suite (``python3 -m pytest``, without ``-m full``) depends on a
solver finishing within a wall-clock limit while other work shares the cores. A test that
asserts a verdict (``proved``, ``refuted``, ``witness``, equal, sat, unsat) gives each of its
solver calls :data:`SOLVER_LIMIT`, at least 10 x the quiet time of the slowest call it makes
(every such test takes under 35 s on 2 cores, most under 5 s). The limit costs time only
when a call does not answer, which on a correct tree none does; ``unknown`` still fails every
test whose point is a verdict. A test whose point is ``unknown`` (a query past its time)
gives a limit its query cannot meet on any machine.
"""

SOLVER_LIMIT = 600.0
"""Seconds per solver call: the ``timeout`` given to ``Settings``, ``decide``, ``check_sat``,
``run_script``, ``compare``, ``find_probes``, ``run_breaker`` and the CLI's ``--timeout``."""
