"""Model folders in Hugging Face's layout, read as untrusted: every refusal comes before the weights are allocated.

A folder holds config.json, model.safetensors (one file: a sharded index is refused) and tokenizer.json or
chars.json. Refused, each with one line: a config past `MAX_LM_BYTES` of float32 weights, pickled weights
(`*.bin`, `*.pt`: never opened), tensors whose names, shapes or dtypes do not match the config (the header is read
alone, capped, before any array), and a file shorter than its header says. Weights are copied into an allocated
model one tensor at a time, so the peak is the model plus its largest tensor.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import save_file
from torch.overrides import TorchFunctionMode

from attnlab.limits import MAX_LM_BYTES, MAX_LM_CONFIG_BYTES, MAX_LM_HEADER_BYTES, MAX_LM_TOKENIZER_BYTES
from attnlab.lm.config import LMConfig, from_hf
from attnlab.lm.model import Llama
from attnlab.lm.vocab import CHARS_FILE, TOKENIZER_FILE, CharVocab, TokenizerVocab
from attnlab.untrusted import JsonRules, Refusal, parse_json, st_entry, st_span

WEIGHTS = "model.safetensors"
PICKLED = ("*.bin", "*.pt", "*.pth", "*.ckpt", "*.pkl")
DTYPES = {"F32": "<f4", "F16": "<f2", "BF16": "<u2"}
STORE = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def read_json(path: Path, cap: int = MAX_LM_CONFIG_BYTES) -> object:
    """A small JSON file, its size and containers capped before parsing; ValueError naming the file."""
    if not path.is_file():
        raise ValueError(f"the folder has no {path.name}")
    if path.stat().st_size > cap:
        raise ValueError(f"{path.name} is {path.stat().st_size:,} bytes, more than the cap of {cap:,}")
    try:
        return parse_json(path.read_bytes(), JsonRules(cap=cap // 8))
    except Refusal as err:
        raise ValueError(f"{path.name} is not valid JSON ({err.reason})") from None


def read_config(folder: Path) -> LMConfig:
    """config.json as an LMConfig, refused when its weights would pass the memory cap."""
    cfg = from_hf(read_json(folder / "config.json"))
    need, cap = 4 * cfg.parameters() / 2**20, MAX_LM_BYTES // 2**20
    if need > cap:
        raise ValueError(f"this model needs {need:,.0f} MB of float32 weights, more than the cap of {cap} MB")
    return cfg


class ShapesOnly(TorchFunctionMode):
    """Inside it (this thread only), filling a tensor with initial values does nothing: a model on the meta device
    needs shapes, not numbers, and `normal_` on meta sets up PyTorch's reference kernels the first time (2 s)."""

    FILLS = frozenset({"normal_", "uniform_", "zero_", "fill_", "ones_", "zeros_"})

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if getattr(func, "__name__", "") in self.FILLS:
            return args[0] if args else kwargs["tensor"]  # the tensor, as filled (nn.init passes it by name)
        return func(*args, **kwargs)


def expected(cfg: LMConfig) -> dict[str, tuple[int, ...]]:
    """Every tensor name the config implies and its shape, from a model built on the meta device (nothing allocated,
    nothing initialised)."""
    with torch.device("meta"), ShapesOnly():
        model = Llama(cfg)
    return {name: tuple(t.shape) for name, t in model.state_dict().items()}


def weights_file(folder: Path) -> Path:
    """model.safetensors, or a refusal naming what the folder holds instead."""
    path = folder / WEIGHTS
    if path.is_file():
        return path
    if (folder / f"{WEIGHTS}.index.json").is_file():
        raise ValueError("sharded checkpoints (model.safetensors.index.json) are not supported: one model.safetensors")
    pickled = sorted(p.name for pattern in PICKLED for p in folder.glob(pattern))
    if pickled:
        raise ValueError(f"{pickled[0]} is pickled weights, which are never opened: safetensors only")
    raise ValueError(f"the folder has no {WEIGHTS}")


def check_header(path: Path, cfg: LMConfig) -> None:
    """The header's names, dtypes, shapes and offsets against the config, read before any tensor."""
    size = path.stat().st_size
    with path.open("rb") as f:
        length = int.from_bytes(f.read(8), "little")
        if not 2 <= length <= min(size - 8, MAX_LM_HEADER_BYTES):
            raise ValueError(f"{path.name}: a header of {length:,} bytes does not fit the file or the cap")
        raw = f.read(length)
    try:
        header = parse_json(raw, JsonRules(cap=MAX_LM_HEADER_BYTES // 16))
    except Refusal as err:
        raise ValueError(f"{path.name}: the header is not valid JSON ({err.reason})") from None
    if not isinstance(header, dict):
        raise ValueError(f"{path.name}: the header is not a JSON object")
    header.pop("__metadata__", None)
    want = expected(cfg)
    if cfg.tie_word_embeddings and "lm_head.weight" in header:  # some writers keep the tied copy: it must fit
        want = {**want, "lm_head.weight": want["model.embed_tokens.weight"]}
    missing, extra = sorted(set(want) - set(header)), sorted(set(header) - set(want))
    if missing or extra:
        what = f"lacks {missing[0]!r}" if missing else f"holds {extra[0][:80]!r}, which the config has no place for"
        raise ValueError(f"{path.name} {what} ({len(missing)} missing, {len(extra)} unexpected)")
    for name, shape in want.items():
        try:
            entry = st_entry(name, header[name], DTYPES)
            st_span(name, entry, size - 8 - length)
        except Refusal as err:
            raise ValueError(f"{path.name}: tensor {name!r} is refused ({err.reason})") from None
        if entry.shape != shape:
            raise ValueError(f"{path.name}: {name} has shape {list(entry.shape)}, the config says {list(shape)}")


def read_vocab(folder: Path, cfg: LMConfig) -> CharVocab | TokenizerVocab:
    """tokenizer.json through `tokenizers`, else chars.json; it must fit the embedding's rows."""
    tok = folder / TOKENIZER_FILE
    if tok.is_file():
        if tok.stat().st_size > MAX_LM_TOKENIZER_BYTES:
            raise ValueError(f"{TOKENIZER_FILE} is more than the cap of {MAX_LM_TOKENIZER_BYTES // 2**20} MB")
        vocab = TokenizerVocab(tok, cfg.bos_token_id)
    elif (folder / CHARS_FILE).is_file():
        vocab = CharVocab.read(read_json(folder / CHARS_FILE))
    else:
        raise ValueError(f"the folder has neither {TOKENIZER_FILE} nor {CHARS_FILE}")
    if len(vocab) > cfg.vocab_size:
        raise ValueError(f"the vocabulary has {len(vocab)} tokens, more than the model's {cfg.vocab_size} rows")
    return vocab


def allocate(cfg: LMConfig) -> Llama:
    """The model's float32 weights in memory: the one large allocation, after every check."""
    return Llama(cfg)


def read_model(folder: Path, weights: Path | None = None) -> tuple[Llama, LMConfig, CharVocab | TokenizerVocab]:
    """Config, vocabulary and weights of a folder, every check before the model is allocated."""
    cfg = read_config(folder)
    path = weights or weights_file(folder)
    check_header(path, cfg)
    vocab = read_vocab(folder, cfg)
    model = allocate(cfg)
    params = model.state_dict()
    with torch.no_grad(), safe_open(str(path), framework="pt") as f:
        for name, target in params.items():
            target.copy_(f.get_tensor(name).to(torch.float32))
    return model.eval(), cfg, vocab


def save_weights(model: Llama, path: Path, dtype: str = "float32") -> None:
    """The state dict with transformers' names (tied: no lm_head), stored in `dtype`."""
    tensors = {k: v.detach().to(STORE[dtype]).contiguous() for k, v in model.state_dict().items()}
    save_file(tensors, str(path), metadata={"format": "pt"})


def save_folder(model: Llama, vocab: CharVocab | TokenizerVocab, folder: Path, dtype: str = "float32") -> None:
    """config.json, model.safetensors and the vocabulary: a folder transformers' from_pretrained reads."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(model.cfg.to_hf(), indent=1) + "\n", encoding="utf-8")
    save_weights(model, folder / WEIGHTS, dtype)
    if isinstance(vocab, CharVocab):
        vocab.save(folder)
    else:
        vocab.tok.save(str(folder / TOKENIZER_FILE))
