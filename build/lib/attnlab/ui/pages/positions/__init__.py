"""The positions lesson (/positions): permutation equivariance and sinusoidal encodings."""
