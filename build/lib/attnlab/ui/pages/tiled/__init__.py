"""The tiled attention page (/tiled): FlashAttention's online softmax, block by block."""
