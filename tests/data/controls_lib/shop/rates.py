import json
from pathlib import Path

HERE = Path(__file__).parent


def rate(code):
    table = json.loads((HERE / "data" / "rates.json").read_text())
    return table[code]
