"""`tcspec hw`: run vector, probe and campaign files through real tensor-core instructions.

The instruction table (:mod:`tcspec.hw.table`), the operand layouts
(:mod:`tcspec.hw.layouts`), the generated PTX (:mod:`tcspec.hw.ptx`), host
packing (:mod:`tcspec.hw.pack`), the CUDA runner (:mod:`tcspec.hw.device`),
`hw run` (:mod:`tcspec.hw.run`) and the layout self-test
(:mod:`tcspec.hw.selftest`). Nothing here imports a solver: the GPU machine has none.
"""
