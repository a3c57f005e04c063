"""The library: a JSON Schema compiled to a byte automaton, held to a model's vocabulary, and
decoded token by token into schema-valid JSON with the evidence for each value.

Its rooms, one folder per pipeline stage and a few modules at the top:
- errors.py, defaults.py, files.py, jsontext.py, processes.py: the base, importing nothing of the package;
- json_reader.py: JSON text read as it is written, strings, containers, leaves with their pointers
  (the one reader of the output, for its followers and its evidence), over jsontext.py;
- automaton/: regular expressions over bytes, lazy DFAs, forced text and shortest completions;
- schema/: reading, checking and compiling a JSON Schema into one automaton (no tokens);
- documents/: files and streams read as text, other formats converted, long texts split;
- vocab/: a model's tokens as bytes, their on-disk cache, forced text tokenized as the model would;
- model.py: the one module that talks to llama.cpp; model_files.py: models named, found in other tools' folders;
- grounding/: strings held to spans of the document, dates and numbers to those it states, values found in it;
- index/: the compiled schema for one vocabulary, its token index and the Guide that walks it;
- integrations/: this library inside other runtimes (llama-cpp-python's logits processors);
- decode/: the decoding, stepped (it asks for evaluations, never makes them), its state, sampling and
  the followers that watch the output;
- runtime/: the one scheduler that steps every document in flight over a context's sequences;
- results/: what an extraction gives back besides its text: each value's evidence, doubtful values
  withheld, a long document's pieces merged, the text indented as it streams;
- extract/: the public entry: prompts, extractions, long documents in pieces, several at once;
- review/: the review page drawn from evidence envelopes.
A room may import itself and the rooms before it in this order, never one after it (the facade,
gguf_extract/__init__.py, and the command line come last); tests/test_structure.py keeps it so.

Order: errors, defaults, files, jsontext, processes < json_reader < automaton < schema < documents < vocab
    < model, model_files < grounding < index < integrations < decode < runtime < results < extract < review < facade < cli
"""
