"""Properties proved over the specification, one module per property family."""
