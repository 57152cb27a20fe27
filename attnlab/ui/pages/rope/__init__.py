"""The RoPE lesson (/rope): positions as rotations of q and k, and why the scores see only relative distance."""
