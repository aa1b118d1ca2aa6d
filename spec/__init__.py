"""The single source: bit-vector values, the ops protocol, formats and datapaths.

Every datapath is written once here, over ``ops``; see ``ref/`` and ``smt/``
for its lowerings.
"""
