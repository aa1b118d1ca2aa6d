"""``tcspec tour``: a few dot products that show what the tensor core really computes."""

from __future__ import annotations

import argparse

from tcspec.api import mma_dot
from tcspec.ref.oracle import exact_model
from tcspec.words import describe_word, hex_word

ONE = 0x3F800000
TWO_POW_M13 = 0x39000000  # 2^-13, exact in TF32
NEG_TWO_POW_M13 = 0xB9000000
INF = 0x7F800000
NAN_LOW_PAYLOAD = 0x7F800001  # an F32 NaN whose payload lives in bits TF32 clears

STOPS = [
    ("Eight products of 2^-26 added to C = 1.0. IEEE arithmetic keeps them "
     "(1 + 2^-23 is an F32 number); the tensor core aligns every term to a window 25 "
     "bits below the largest exponent and truncates, so each 2^-26 becomes 0.",
     [TWO_POW_M13] * 8, [TWO_POW_M13] * 8, ONE),
    ("Now the eight products are -2^-26: each is truncated toward zero (to 0 units, "
     "not -1), so D stays 1.0 where IEEE gives 1 - 2^-23.",
     [NEG_TWO_POW_M13] * 8, [TWO_POW_M13] * 8, ONE),
    ("Inf x 0 anywhere in the dot gives the canonical NaN 0x7FFFFFFF.",
     [INF] + [ONE] * 7, [0] + [ONE] * 7, 0),
    ("TF32 reads an F32 word after clearing fraction bits 12..0: a NaN whose payload "
     "sits only there arrives as +Inf (B200 word tf32-low-payload-pretruncate).",
     [NAN_LOW_PAYLOAD] + [0] * 7, [ONE] + [0] * 7, 0),
]


def tour() -> None:
    print("tcspec tour: dense-tf32 (K=8, F32 accumulate), B200 semantics vs exact IEEE RNE\n")
    for number, (text, a, b, c) in enumerate(STOPS, 1):
        got = mma_dot(a, b, c, a_format="tf32")
        ieee = exact_model(a, b, c, a_format="tf32")
        print(f"{number}. {text}")
        print(f"   tcgen05  D = {hex_word(got)}  ({describe_word(got, 'f32')})")
        print(f"   exact RNE  = {hex_word(ieee)}  ({describe_word(ieee, 'f32')})\n")
    print("Next: `tcspec list` for every datapath, `tcspec eval --datapath dense-e4m3 ...` for "
          "your own words,\n`tcspec smtlib --datapath dense-tf32` for the solver formula, "
          "`tcspec validate --reference` for the evidence.")
    words = ",".join([f"0x{TWO_POW_M13:08X}"] * 8)
    print(f"Stop 1, stage by stage: `tcspec explain --datapath dense-tf32 --a {words} --b {words} "
          f"--c 0x{ONE:08X}` (--vs exact-rne compares, --svg FILE draws it).")


def cmd_tour(args: argparse.Namespace) -> int:
    """``tcspec tour``."""
    tour()
    return 0
