"""The model in use: one scheduler stepping every document's decoding over a context's sequences."""
