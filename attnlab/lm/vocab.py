"""Text to ids and back: attnlab's character vocabulary (`chars.json`), or a folder's tokenizer.json.

The character vocabulary is a list of strings: id 0 is `<bos>` (every sequence starts with it: the sink), id 1 is
`<unk>` (any character the list lacks), then one character per id. A tokenizer.json goes through the `tokenizers`
package, imported only when such a folder is loaded (the app's extra has it; the library alone does not need it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

BOS, UNK = "<bos>", "<unk>"
CHARS_FILE = "chars.json"
CHARS_FORMAT = "attnlab-chars/1"
TOKENIZER_FILE = "tokenizer.json"


@dataclass(frozen=True)
class Prepared:
    """Text made into the model's input: ids (<bos> first where the model has one), what was replaced or cut."""

    ids: list[int]
    tokens: list[str]  # each id's text, <bos> and <unk> as such
    unknown: list[str]  # characters the vocabulary lacks (they became <unk>)
    cut: int  # tokens dropped to fit the model's length (0: none)
    text: str  # the text the ids stand for, after the cut


class CharVocab:
    """One id per character, <bos> and <unk> first."""

    def __init__(self, tokens: list[str]):
        if tokens[:2] != [BOS, UNK] or len(set(tokens)) != len(tokens):
            raise ValueError(f"a character vocabulary starts with {BOS} and {UNK} and repeats nothing")
        if any(len(t) != 1 for t in tokens[2:]):
            raise ValueError("a character vocabulary holds single characters after <bos> and <unk>")
        self.tokens = list(tokens)
        self.index = {t: i for i, t in enumerate(self.tokens)}
        self.bos_id, self.unk_id = 0, 1

    def __len__(self) -> int:
        return len(self.tokens)

    @classmethod
    def from_counts(cls, counts: dict[str, int], cap: int | None = None) -> CharVocab:
        """The `cap` most frequent characters (ties broken by the character), the rest left to <unk>."""
        ranked = sorted(counts, key=lambda c: (-counts[c], c))
        return cls([BOS, UNK, *ranked[:cap]])

    def encode(self, text: str) -> list[int]:
        """<bos>, then one id per character (<unk>'s for one the vocabulary lacks)."""
        return [self.bos_id, *(self.index.get(c, self.unk_id) for c in text)]

    def pieces(self, text: str) -> list[str]:
        """The text as the model's tokens would show it: one character each."""
        return list(text)

    def decode(self, ids) -> str:
        """Characters of the ids; <bos> is dropped, <unk> written as <unk>."""
        return "".join(self.tokens[i] for i in ids if i != self.bos_id)

    def token(self, i: int) -> str:
        """One id's text."""
        return self.tokens[i]

    def unknown(self, text: str) -> list[str]:
        """The characters of `text` the vocabulary lacks, each once, in the order they first appear."""
        return list(dict.fromkeys(c for c in text if c not in self.index))

    def banned(self) -> list[int]:
        """Ids generation never draws: the start marker and <unk> (it has no one character to write)."""
        return [self.bos_id, self.unk_id]

    def save(self, folder: Path) -> None:
        """chars.json beside the weights."""
        body = {"format": CHARS_FORMAT, "bos": BOS, "unk": UNK, "tokens": self.tokens}
        (folder / CHARS_FILE).write_text(json.dumps(body, ensure_ascii=False, indent=0), encoding="utf-8")

    @classmethod
    def read(cls, raw: object) -> CharVocab:
        """From a parsed chars.json; ValueError with one line when it is not one."""
        if not isinstance(raw, dict) or raw.get("format") != CHARS_FORMAT or not isinstance(raw.get("tokens"), list):
            raise ValueError(f"{CHARS_FILE} is not an attnlab character vocabulary ({CHARS_FORMAT})")
        tokens = raw["tokens"]
        if not all(isinstance(t, str) for t in tokens):
            raise ValueError(f"{CHARS_FILE}: every token must be a string")
        return cls(tokens)


class TokenizerVocab:
    """A Hugging Face tokenizer.json; ids start with the model's <bos> where it has one (Qwen2 has none)."""

    def __init__(self, path: Path, bos_token_id: int | None):
        try:
            from tokenizers import Tokenizer
        except ImportError:
            raise ValueError(
                "this model's tokenizer.json needs the tokenizers package (pip install tokenizers)"
            ) from None
        try:
            self.tok = Tokenizer.from_file(str(path))
        except Exception as err:  # the library's own errors are many; the loader reports one line
            raise ValueError(f"{TOKENIZER_FILE} could not be read: {str(err)[:120]}") from None
        self.bos_id = bos_token_id
        unk = self.tok.model.unk_token if hasattr(self.tok.model, "unk_token") else None
        self.unk_id = self.tok.token_to_id(unk) if unk else None

    def __len__(self) -> int:
        return self.tok.get_vocab_size(with_added_tokens=True)

    def _ids(self, text: str) -> list[int]:
        return [i for i in self.tok.encode(text, add_special_tokens=False).ids]

    def encode(self, text: str) -> list[int]:
        """The model's <bos> (where it has one), then the tokenizer's ids."""
        return ([] if self.bos_id is None else [self.bos_id]) + self._ids(text)

    def pieces(self, text: str) -> list[str]:
        """The text's tokens as the tokenizer writes them."""
        return self.tok.encode(text, add_special_tokens=False).tokens

    def decode(self, ids) -> str:
        """Text of the ids, special tokens dropped."""
        return self.tok.decode(list(ids), skip_special_tokens=True)

    def token(self, i: int) -> str:
        """One id's token text (or '<i>' for an id the tokenizer does not name: a padded embedding row)."""
        return self.tok.id_to_token(i) or f"<{i}>"

    def unknown(self, text: str) -> list[str]:
        """Characters of `text` that only reach the model as the tokenizer's unknown token."""
        if self.unk_id is None:
            return []  # byte-level tokenizers write every character
        return list(dict.fromkeys(c for c in text if self.unk_id in self._ids(c)))

    def banned(self) -> list[int]:
        """Ids generation never draws: the start marker."""
        return [] if self.bos_id is None else [self.bos_id]
