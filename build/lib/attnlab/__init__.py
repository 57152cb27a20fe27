"""attnlab: every stage of attention, computed, drawn and checked against PyTorch."""
