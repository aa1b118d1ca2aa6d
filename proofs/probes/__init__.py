"""Probe queries, the existential siblings of the proofs: inputs on which models differ."""
