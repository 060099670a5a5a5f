"""A program's settings saved with its compiled state, so that a compiled program runs as it was compiled
(read_k, top_k, max_iterations, the small-model repairs...), as IReRa keeps its config inside the
program state. How answers are stated (`accept`) and which LM runs a step are not saved: they are
the caller's to choose."""
from __future__ import annotations


class SavedSettings:
    """A dspy.Module mixin: the attributes named in `SETTINGS` are saved under "settings" in the module's
    state (`save`, `dump_state`) and restored by `load` and `load_state`. A state without "settings" (one
    saved before they were) leaves the module's own; a setting the module does not have, or of another
    type, is refused with a ValueError naming it, before anything is loaded."""

    SETTINGS: tuple[str, ...] = ()

    def settings(self) -> dict:
        return {name: getattr(self, name) for name in self.SETTINGS}

    def dump_state(self, json_mode=True):
        return {**super().dump_state(json_mode=json_mode), "settings": self.settings()}

    def load_state(self, state, *, allow_unsafe_lm_state=False):
        saved = state.get("settings") or {}
        for name, value in saved.items():
            if name not in self.SETTINGS:
                raise ValueError(f"setting {name!r} is not one of {type(self).__name__}'s: {', '.join(self.SETTINGS)}")
            current = getattr(self, name)
            if value is not None and current is not None and type(value) is not type(current):
                raise ValueError(f"setting {name!r} is {value!r}; {type(self).__name__} takes a {type(current).__name__}")
        super().load_state(state, allow_unsafe_lm_state=allow_unsafe_lm_state)
        for name, value in saved.items():
            setattr(self, name, value)
        return self
