"""The Attention file page (/attention-file): attention from any model, uploaded or built live."""
