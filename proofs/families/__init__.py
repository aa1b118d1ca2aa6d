"""Property families as declarations on the equivalence engine (issue 31).

A family is two runs of a datapath over related input words and a relation between their
D words (:class:`declare.Family`); :func:`declare.check` traces both runs of the
specification under check, states the relation, and hands the pair to the engine
(:mod:`proofs.engine`), which finds the cut-points between the runs itself. A family module
writes its transformation, relation and hypotheses from SEMANTICS.md, with field positions
from the rule book's tables (:mod:`proofs.rulebook.fields`), never from ``spec/``.
"""
