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
MAX_UPLOAD_MB = 2  # one weights file: the Playground's uploader refuses more in the browser
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 2**20  # its loader checks the bytes again, whatever sent them
MAX_URL_EDITS = 256  # edited cells a link carries; past this a link is no longer something to paste in a chat
MEMORY_CAP_BYTES = 512 * 2**20  # what one request may allocate on the hosted (CPU-only) app

# Float comparisons: |ours - reference| <= TOL + RTOL * |reference|. The absolute part is a floor for values near zero;
# the relative part follows the size of the values, since one ulp of a float32 near 10 is already 1e-6 and another CPU
# (another SIMD width, another BLAS kernel) sums the same few hundred products in another order.
TOL_FLOAT64 = 1e-12  # our float64 stages against PyTorch on the same numbers (absolute floor)
TOL_FLOAT32 = 1e-5  # the same in float32 (contract 1; absolute floor)
RTOL_FLOAT64 = 1e-12  # float64: ~2e-16 per rounding, a few thousand roundings, and room for another summation order
RTOL_FLOAT32 = 1e-5  # float32: ~6e-8 per rounding; sums of a few hundred terms in another order differ by ~1e-6
MAX_STEP = 10**7  # largest checkpoint step a link may name (the shipped runs stop far below)
MAX_DECODER_SEQ_CHARS = 1000  # characters of a trained decoder's sequence kept from a link (the model caps symbols)
MAX_DECODER_RUNS = 256  # trained-decoder runs a server keeps (each is L x H x T x T plus T x V floats, tiny)
LIVE_TRAIN_BUDGET_S = 30.0  # wall-clock cap of one "train it yourself" run; one such run at a time per server
MAX_FINISHED_RUNS = 64  # ended live runs a runner keeps for owners who have not collected theirs (the oldest go)
LIVE_BENCH_BUDGET_S = 120.0  # wall-clock cap of the Benchmark page's live run; one such run at a time per server
BUSY_OTHER_CORES = 0.5  # a timing is marked "measured while busy" when other work kept this many cores busy on average
# The whole server process (every session together) must stay under this: the hosted app's largest memory (DESIGN:
# 690 MB to 2.7 GB). One live benchmark at a time allows one MEMORY_CAP_BYTES request above the idle server.
SERVER_MEMORY_CAP_BYTES = 2700 * 10**6
INDUCTION_CLEAR = 0.5  # weight on "what followed last time" from which the decoder page says a head looks it up

TRAINED_MAX_SYMBOLS = 64  # symbols one decoder run takes: the length its position embeddings were trained on
TRAINED_LIVE_MAX_STEPS = 400  # steps a live training run on the page may take (one at a time per server)
DECODER_GEN_STEPS = 16  # symbols the page's generation stepper adds (one cached step each)
PATCH_MIN_GAP = 1e-3  # nats between the clean and corrupt metric below which a restored share is undefined (NaN)

# Attention files (contract 9): what one uploaded or captured file may hold. 16 Mi values are 64 MiB in float32,
# so the decoded tensors, the upload's bytes and the checks' temporaries stay well under MEMORY_CAP_BYTES.
MAX_ATTN_VALUES = 16 * 2**20  # attentions + queries + keys, all layers and heads together
MAX_ATTN_TOKENS = 2048  # tokens on either side (queries or keys)
MAX_ATTN_HEADS = 2048  # layers x heads (GPT-2 XL has 48 x 25 = 1200, Llama-2-13B 40 x 40 = 1600)
MAX_ATTN_HEAD_DIM = 1024  # d of the recorded queries and keys
MAX_ATTN_TOKEN_CHARS = 256  # characters in one token's text
MAX_ATTN_MODEL_CHARS = 200  # characters in the model's name
MAX_ATTN_HEADER_BYTES = 2**20  # a safetensors header: 2 x 2048 tokens of ~100 bytes; json.loads stays under ~30 MB
MAX_ATTN_HEADER_CONTAINERS = 2**15  # '[' and '{' in a header: json.loads builds one object for each
MAX_ATTN_UPLOAD_MB = 72  # .streamlit/config.toml server.maxUploadSize: 64 MiB of float32 values plus the header
MAX_ATTN_FILE_BYTES = MAX_ATTN_UPLOAD_MB * 2**20
MAX_ATTN_QK_ABS = 1e6  # largest |value| of a recorded query or key (real models stay in the hundreds)
MAX_ATTN_RULE_VALUE = 1e6  # largest scale or soft-cap a file may state (Gemma 2 caps at 50, scales near 0.06)
MAX_ATTN_WINDOW = 2**31 - 1  # largest sliding window a file may state (Mistral's 4096 blocks nothing in shorter text)
TOL_ATTN_WEIGHT = 1e-3  # a weight may lie this far below 0 or above 1 (float16 and bfloat16 rounding)
TOL_ATTN_ROW_SUM = 2e-2  # a row's weights sum to 1 (or 0: a row that saw nothing) within this
MAX_DRAWN_TOKENS = 256  # an attention file's heatmaps and full line sets are drawn up to this many tokens a side

# Lessons, anatomy pages and uploads elsewhere: caps a visitor can reach from a link or a widget.
MAX_DICTIONARY_DIM = 8  # entries in one typed vector of the soft dictionary lesson
MAX_COST_T = 2048  # the largest T measured live: one (T, T) float32 matrix is 16 MiB
MIN_COST_T = 16  # the smallest T the cost lesson measures live
COST_LIVE_BUDGET_S = 1.2  # total time the live measurement may spend (the page must stay responsive)
MAX_SCALING_DK = 512  # the largest d_k the scaling lesson draws q.k samples for
SCALING_CHUNK_BYTES = 2 * 2**20  # random draws held at once: a new seed must not cost the shared server hundreds of MB
MAX_MASKING_TOKENS = 12  # tokens of the masking lesson: its row-by-row table stays readable
MAX_TILED_TOKENS = 12  # tokens of the tiled attention page: every tile is drawn with its numbers
MAX_POSITIONS_TOKENS = 16  # tokens of the positions lesson (shuffled and un-shuffled outputs side by side)
MAX_MULTIHEAD_FULL_D = 16384  # d_model the Multi-head page's full-size arithmetic accepts (counted, never allocated)
MAX_ROPE_D = 256  # head width of the RoPE lesson: its decay rotates 32 samples x 513 distances x d float64 (34 MB)
MAX_ROPE_BASE = 1e9  # RoPE base the lesson accepts (Llama 3 uses 5e5, Qwen2.5 1e6)
MAX_ROPE_POS = 4096  # the position slider of the RoPE lesson's turning pair
MAX_ROPE_SHIFT = 131_072  # how far the RoPE lesson may shift every position (a 128k context); angles stay float64
MAX_ROPE_DIST = 131_072  # the longest relative distance of the RoPE lesson's decay (sampled at 513 distances)
MAX_DICTIONARY_VALUE = 1000.0  # largest |value| typed into the soft dictionary lesson
MAX_ANSWER_CHARS = 400  # longer than any honest answer (64 tokens' worth of mask cells is typed as a count)
MAX_ANSWER_SHAPE_DIMS = 4  # dimensions a typed shape answer may have
# Benchmark results files (contract 11): uploaded on the Benchmark page or read from data/gpu/. The record preset
# writes about 500 rows (~250 KB); a file is a few hundred KB at most, and json.loads of 2 MiB stays under ~30 MB.
MAX_RESULTS_UPLOAD_MB = 2  # the Benchmark page's uploader refuses more in the browser
MAX_RESULTS_FILE_BYTES = MAX_RESULTS_UPLOAD_MB * 2**20  # its loader checks the bytes again, whatever sent them
MAX_RESULTS_ROWS = 4096  # rows in one file: eight times the record preset's grid
MAX_RESULTS_JSON_ITEMS = 20 * MAX_RESULTS_ROWS + 8192  # '[', '{' and ',' before json.loads: a row has 19
MAX_RESULTS_TEXT_CHARS = 200  # characters of a device name, a torch or CUDA version, a date
MAX_RESULTS_STATUS_CHARS = 1000  # characters of a row's status ("unsupported: " and one sentence of reason)
MAX_RESULTS_DETAIL_CHARS = 4000  # characters of a row's `detail`: PyTorch's whole text behind an unsupported status
MAX_RESULTS_SIZE = 2**24  # the largest batch, heads, T or head size a row may name
TOL_MINILM_COSINE = 0.99999  # contract 5: our embedding against SentenceTransformer.encode
TOL_CAPTURE_QK = 1e-4  # recorded q and k must give back the model's attentions within this
TOL_CAPTURE_QK_HALF = 1e-2  # the same for a model run in float16 or bfloat16 (its weights carry ~3 digits)
MAX_HEAD_PANELS = 8  # heads drawn side by side at most: 64 panels of 64 x 64 would freeze a browser
MAX_PANEL_CELLS = 16_384  # cells one side-by-side chart may hold: 8 panels of 45 x 45, 4 of 64 x 64
MAX_NPZ_MEMBERS = 64  # .npz members listed in one archive: zipfile builds an entry for each before anything is read
MAX_NPY_HEADER_BYTES = 4096  # a .npy header numpy writes for a matrix is 118 bytes; numpy itself allows 10 000
TOL_ANSWER_ROW_SUM = 0.02  # a hand-added row of two-decimal weights can miss 1 by a rounding step or two
TOL_ANSWER_TIE = 1e-9  # keys whose weights agree this closely share the top (equal tokens give equal weights)
TOL_ANSWER_SPREAD = 1e-9  # smaller changes of the mean top weight count as "unchanged"
# The course's tasks (contract 17): how close a number read off a page must be to what the page computes now.
TOL_ANSWER_WEIGHT = 0.01  # a weight or probability, printed with two decimals on its chart: one printed step
TOL_ANSWER_READ = 0.01  # relative: a number the page prints to three or more significant digits (an angle, a value)
TOL_ANSWER_BYTES = 0.005  # relative: a byte count the page prints to three significant digits (131 kB, 17.2 GB)
TOL_ANSWER_ESTIMATE = 0.1  # relative: a sampled estimate (Var(q.k) over 4,000 draws, ~2 % noise) answered by its theory
TOL_ANSWER_SCORE_TIE = (
    0.005  # head scores printed with two decimals: a head within half a step of the best is right too
)

# The key/value cache page (contract 14): a shape a visitor types, and the small MLA computed live.
MAX_KV_CONTEXT = 10**7  # tokens of context the page sizes a cache for (only arithmetic: nothing is allocated)
MAX_KV_BATCH = 4096  # sequences at once
MAX_KV_SIZE = 4096  # layers, heads, key/value heads or head width of a typed shape
MAX_KV_LATENT = 65536  # an MLA latent or rotated key width of a typed shape
MAX_KV_BILLIONS = 10_000.0  # a typed model's parameters, in billions (the weights beside the cache)
MAX_MLA_TOKENS = 12  # tokens of the page's live MLA: every stage is a heatmap
MAX_MLA_HEADS = 8
MAX_MLA_HEAD_DIM = 16
MAX_MLA_LATENT = 64
MAX_MLA_ROPE = 16  # the shared rotated key's width (even)

# The language model (contract 16): what one loaded model and one request may take.
MAX_LM_BYTES = MEMORY_CAP_BYTES  # a loaded model's weights as float32; a config past this is refused before loading
MAX_LM_TOKENS = 512  # tokens one pass takes (a model's own max_position_embeddings may be less); longer text is cut
MAX_LM_ATTENTION_BYTES = 128 * 2**20  # every layer's (H, T, T) float32 weights of one pass: caps T for large models
MAX_LM_GENERATE = 256  # tokens one generate call adds
MAX_LM_CONFIG_BYTES = 2**20  # a config.json or chars.json read from a model folder
MAX_LM_HEADER_BYTES = 2**24  # a model.safetensors header (~100 bytes per tensor)
MAX_LM_TOKENIZER_BYTES = 32 * 2**20  # a tokenizer.json (Qwen2's is 7 MB)
TOL_LM_LOGITS = 1e-4  # our logits against transformers' LlamaForCausalLM on the same folder (contract 16)
MAX_LM_LENS_BYTES = 256 * 2**20  # a whole (L + 1, T, V) float32 logit lens (contract 19); past it, a layer at a time
TOL_LM_PARTS = 1e-4  # the attribution's parts sum to the logit within this (contract 19)
# The Language model page (/lm): what its link and widgets may ask for.
MAX_LM_TEMPERATURE = 2.0  # the sampler's temperature (0: greedy)
MAX_LM_PAGE_GEN = 64  # characters the page generates, one at a time, after the text
MAX_LM_WINDOW = 512  # the sink experiment's window (its held-out passage is 640 characters)
MAX_LM_SINKS = 64  # first tokens the window cache keeps beside the window
MAX_LM_TOP_K = 100_000  # a link's top_k (past a model's vocabulary it keeps every token)

# The live class (contract 18): what one class, one student and one answer may take.
MAX_CLASS_STUDENTS = 300  # students who may answer in one class
MAX_CLASS_ANSWER_CHARS = 200  # characters of one answer sent to a class
CLASS_IDLE_S = 6 * 3600  # a class expires this long after its last change
MAX_CLASS_LINK_CHARS = 16_384  # the presenter's query a class carries (256 edited cells fit with room to spare)
MAX_CLASS_STUDENT_CHARS = 64  # an opaque student id
CLASS_ANSWER_BURST = 12  # answers one student may send within CLASS_ANSWER_WINDOW_S (changing an answer included)
CLASS_ANSWER_WINDOW_S = 60
