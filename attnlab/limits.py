"""Every cap and tolerance the app enforces, written once: URL parsers, widgets, loaders and checks read them here.

A cap keeps one visitor's request small enough for a shared CPU host (DESIGN: nothing a user asks
for may allocate more than ~512 MB); a tolerance says how close our numbers must be to PyTorch's.
"""

from __future__ import annotations

MAX_TOKENS = 64  # tokens a page computes; longer text is cut and the page says so
MAX_TEXT_CHARS = 2000  # characters of free text kept from a link
MIN_D_MODEL = 2
MAX_D_MODEL = 64  # the Playground, Cross-attention and uploads: 64 x 64 cells per matrix at most
MAX_SEED = 2**31 - 1
MAX_WEIGHT = 1000.0  # largest |value| of an edited or uploaded weight cell
MAX_UPLOAD_BYTES = 2 * 2**20  # one weights file (Streamlit's own maxUploadSize is 2 MB too)
MAX_URL_EDITS = 256  # edited cells a link carries; past this a link is no longer something to paste in a chat
MEMORY_CAP_BYTES = 512 * 2**20  # what one request may allocate on the hosted (CPU-only) app

TOL_FLOAT64 = 1e-12  # our float64 stages against PyTorch on the same numbers
TOL_FLOAT32 = 1e-5  # the same in float32 (contract 1)
MAX_STEP = 10**7  # largest checkpoint step a link may name (the shipped runs stop far below)
MAX_DECODER_SEQ_CHARS = 1000  # characters of a trained decoder's sequence kept from a link (the model caps symbols)
MAX_DECODER_RUNS = 256  # trained-decoder runs a server keeps (each is L x H x T x T plus T x V floats, tiny)
LIVE_TRAIN_BUDGET_S = 30.0  # wall-clock cap of one "train it yourself" run; one such run at a time per server
INDUCTION_CLEAR = 0.5  # weight on "what followed last time" from which the decoder page says a head looks it up

TRAINED_MAX_SYMBOLS = 64  # symbols one decoder run takes: the length its position embeddings were trained on
TRAINED_LIVE_MAX_STEPS = 400  # steps a live training run on the page may take (one at a time per server)
