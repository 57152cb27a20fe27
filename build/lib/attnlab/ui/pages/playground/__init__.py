"""The Playground page (/): the weight editor, the check against PyTorch, what-if comparisons."""
