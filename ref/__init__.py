"""Executable lowerings, the independent oracle, the reference vectors and input checks."""
