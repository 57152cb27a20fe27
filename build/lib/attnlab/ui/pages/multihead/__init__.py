"""The Multi-head page (/multihead): d_model cut into heads, fused QKV, dropout, nn.MultiheadAttention."""
