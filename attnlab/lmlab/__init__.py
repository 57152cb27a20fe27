"""The language model opened up, for the Language model page (`/lm`) and its notebook: numbers only, no UI.

`reading` (a text through the model: each token's loss, first guesses, every head's weights, the top k at any
position), `finder` (the heads' previous-token, sink, line-earlier and induction scores), `stages` (one layer as
the Playground's stage table on the real weights), `streaming` (StreamingLLM's experiment: whole cache, window,
window + sinks), `history` (a run along its checkpoints), `texts` (first texts, held-out passages). Every model
call goes through `attnlab.lm`.
"""
