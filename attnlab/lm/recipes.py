"""The shipped language models' recipes: `lm-zh` and `lm-en` (python -m attnlab.train lm-zh --out DIR).

Sizes are set by the 8 MB the six float16 checkpoints may take: about 650 k parameters each. English has 80-odd
characters, so nearly all of them sit in four layers of width 128. A Chinese character vocabulary runs to
thousands: the 2,400 most frequent characters of the training text are kept (96.4 % of it; the rest is <unk>)
and the width is 96, so the embedding (230 k numbers) leaves four layers. Steps are fixed, sized from the measured
CPU time per step so that a run takes at most 15 minutes on two quiet cores.
"""

from __future__ import annotations

from attnlab.lm.training import LMRecipe

LM_RECIPES = {
    "lm-zh": LMRecipe("zh", d_model=96, ffn=256, vocab_cap=2400),
    "lm-en": LMRecipe("en", d_model=128, ffn=256),
}
