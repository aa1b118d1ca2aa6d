"""Solver lowerings of the specification: Z3 terms, the traced DAG, SMT-LIB2, pysmt."""
