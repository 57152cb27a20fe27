"""The shipped language models' recipes: `lm-zh` and `lm-en` (python -m attnlab.train lm-zh --out DIR).

Two layers of four query heads sharing two key/value heads, SwiGLU four times as wide as the stream: an induction
circuit needs two layers, and the trials found two layers form one within the budget where four did not. Sizes are
set by the 8 MB the six float16 checkpoints may take. English has 60-odd characters, so nearly all of its 500 k
parameters sit in the layers (width 128). A Chinese character vocabulary runs to thousands: the 2,800 most frequent
characters of the training text are kept (97.5 % of it; the rest is <unk>) and the width is 96 (546 k parameters,
half of them the embedding).
Copying is taught by periodic rows: all of them for the first 300 steps (segments of 64 characters, periods 4 to
16), a fifth after (segments of 128, periods 4 to 48), and a quarter of the text windows carry a repeated span. The
English model copies (a random string's second copy costs a tenth of its first); the Chinese one does not: with
2,800 characters in 96 dimensions the periodic phase gave it no induction head by step 300 (nor when its periodic
rows drew from the 300 most frequent characters only: `--set alphabet=300`, held-out 4.42 against 4.33 without, random
string 8.45 -> 8.05), and its page says so from its own measurement.
2,400 steps of 16 windows of 256 characters: on two quiet cores of this machine a step took 0.24 s (zh) and 0.16 s
(en) with two torch threads, 0.42 s and 0.30 s with one, so a run takes about 10 and 7 minutes, within 15.
"""

from __future__ import annotations

from attnlab.lm.training import LMRecipe

COMMON = dict(
    layers=2,
    heads=4,
    kv_heads=2,
    steps=2400,
    warmup=50,
    periodic_until=300,
    periodic_share=1.0,
    periods=(4, 16),
    segment=64,
    later_share=0.2,
    later_periods=(4, 48),
    later_segment=128,
    repeat_share=0.25,
)
LM_RECIPES = {
    "lm-zh": LMRecipe("zh", d_model=96, ffn=384, vocab_cap=2800, qk_std=96**-0.5, **COMMON),
    "lm-en": LMRecipe("en", d_model=128, ffn=512, qk_std=128**-0.5, **COMMON),
}
