"""The Trained decoder page (/decoder): small causal decoders trained here, their heads and curves."""
