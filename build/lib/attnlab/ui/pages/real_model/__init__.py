"""The Real model page (/real-model): all-MiniLM-L6-v2 through attnlab's own attention."""
