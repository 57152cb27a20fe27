"""The math behind the anatomy pages: `heads` (Multi-head), `cross` (Cross-attention), `neuron` (Neuron view)."""
