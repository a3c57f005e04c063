"""Documents as the text the model reads: files and streams decoded, PDF/HTML/DOCX converted (convert/), long texts split.
May import: the base modules, automaton, schema (the rooms before it in core/__init__.py's Order).
"""
