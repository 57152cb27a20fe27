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
MAX_ATTNFILE_UPLOAD_MB = 68  # the Attention file uploader: 16 M float32 values (64 MiB) plus a header of tokens
MAX_DRAWN_TOKENS = 256  # an attention file's heatmaps and full line sets are drawn up to this many tokens a side
MAX_FILE_LAYERS = 64  # the Attention file page's links: the largest layer, head and token position they may name
MAX_FILE_HEADS = 64
MAX_FILE_TOKENS = 2048
