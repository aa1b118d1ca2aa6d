"""FP8 e4m3 ``mma.m16n8k32`` on sm_89 as a compiler might emulate it on an older GPU:
convert every operand to f16 (exact: every e4m3 value is an f16 value) and chain two
sm_80 ``mma.m16n8k16`` f16 instructions, the first's D the second's C.

``tcspec equiv --datapath sm_89-mma-m16n8k32-e4m3-e4m3-c32-d32
docs/examples/equiv/fp8_via_f16.py:impl`` says whether that gives the sm_89 word for every
input (docs/equiv.md shows the answer).
"""

from tcspec import convert_word, datapath_word

HALF_STEP = "sm_80-mma-m16n8k16-f16-f16-c32-d32"


def impl(ops, words):
    def as_f16(word):
        return ops.zext(convert_word(ops, word, "e4m3", "f16"), 32)

    d = words["c"]
    for first in (0, 16):
        step = {f"{side}{i}": as_f16(words[f"{side}{first + i}"])
                for side in "ab" for i in range(16)}
        step["c"] = d
        d = datapath_word(ops, HALF_STEP, step)
    return d
