"""The Language model page (/lm): its state and caches, controls, and one module per section."""
