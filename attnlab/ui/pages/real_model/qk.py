"""The Real model page's query-key map: one of MiniLM's heads, its queries and keys as the model computed them."""

from __future__ import annotations

from attnlab.pretrained import Encoder, EncoderRun
from attnlab.ui.app.i18n import t
from attnlab.ui.pages.real_model import real
from attnlab.ui.parts.qkview import qk_panel


def pick_query(i: int) -> None:
    """A query clicked on the map becomes the followed query (counted from 1 in the URL)."""
    real.REAL["q"] = i + 1


def qk_view(model: Encoder, run: EncoderRun) -> None:
    """The chosen head's map: Q and K recomputed from that layer's input (biases included), weights from the run."""
    real.layer_head_pickers(run)
    layer, head, query = real.picked(run)
    heads = model.layer_steps(run, layer).attention.heads  # q, k: (H, T, d_k)
    tokens = list(run.tokens)
    qk_panel(
        heads.q[head].numpy(),
        heads.k[head].numpy(),
        run.attentions[layer, head].numpy(),
        tokens,
        tokens,
        query,
        causal=False,
        title=t("qk.title", layer=layer + 1, head=head + 1),
        key="real.qk_chart",
        pick=pick_query,
    )
