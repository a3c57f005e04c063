from typing import Any

def walk(
    dfa: Any, token_bytes: Any, lengths: Any, ids: Any, states: Any, positions: Any, kept_ids: Any, kept_states: Any
) -> int: ...
