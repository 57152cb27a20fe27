"""The scaling lesson (/scaling): why attention divides by sqrt(d_k)."""
