"""The equivalence engine (issue 30): two traced DAGs proved equal for all inputs by
simulation-found cut-points (:mod:`.sweep`), with a structural proof cache (:mod:`.cache`)."""

from tcspec.proofs.engine.cache import ProofCache, structure_key
from tcspec.proofs.engine.sweep import (
    PROVED,
    REFUTED,
    UNKNOWN,
    EngineSettings,
    EngineStats,
    EquivalenceResult,
    prove_equivalent,
)

__all__ = ["PROVED", "REFUTED", "UNKNOWN", "EngineSettings", "EngineStats",
           "EquivalenceResult", "ProofCache", "prove_equivalent", "structure_key"]
