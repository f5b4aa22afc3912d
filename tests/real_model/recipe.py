"""The README's local-server recipe, read from the README itself: what a user is told to run is what the real-model
tests and bench/real_model.py run with."""

import json
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_recipe():
    """(REASONING_MODELS, the other REASONING_* settings, the server's flags) from the README's local-server block."""
    block = next(b for b in re.findall(r"```sh\n(.*?)```", README.read_text(), re.DOTALL) if "llama_cpp.server" in b)
    models = json.loads(re.search(r"REASONING_MODELS='(.*?)'", block, re.DOTALL)[1])
    others = dict(re.findall(r"export (REASONING_(?!MODELS=|MODEL_PRIMARY)\w+)=(\S+)", block))
    server = block.split("llama_cpp.server", 1)[1].split("&", 1)[0]
    return models, others, server


def settings_for(model, base):
    """The REASONING settings the recipe gives, with its model entry under `model` and served at `base`."""
    models, others, _ = readme_recipe()
    entry = {**models["openai/smollm2"], "api_base": base}
    values = {name.removeprefix("REASONING_"): float(value) for name, value in others.items()}
    values = {
        name: int(value) if value.is_integer() and name.endswith("RETRIES") else value for name, value in values.items()
    }
    return values | {"MODELS": {model: entry}}
