"""Leave-one-log-out check of the CUDA-graph estimate's two measured constants (run by hand).

    python tools/cudagraph_loo.py LOGS_DIR      # LOGS_DIR: shared data vllm-0.19-h100-startups/logs

The per-layer per-graph constants of ``cudagraph_profile`` (registry/engines/vllm-0.17-0.19.yaml) are the
medians of "per-graph MiB ÷ layers" from each 0.19.0 H100 log's DEBUG lines
("Estimated PIECEWISE|FULL CUDA graph memory: F MiB first-capture + (n-1) × X MiB per-graph").  Here each
log is held out in turn: the medians are taken over the other 17 and the held-out log's total is predicted
with kvreg's own terms (engine_memory_pools: first-capture fixed part, forward and split-KV bytes per token,
layers, graph counts), the same arithmetic as engine_cudagraph_bytes (kvreg/sql/204_engine_reserve.sql).
Prints the in-sample and held-out |error| of the total against "Estimated CUDA graph memory: X GiB total".
Results are in docs/engine.md (§ CUDA graphs).
"""

from __future__ import annotations

import re
import statistics
import sys
from pathlib import Path

from kvreg.build import connect

GIB, MIB = 2**30, 2**20
LINE = re.compile(r"Estimated (PIECEWISE|FULL) CUDA graph memory: [\d.]+ MiB first-capture \+ \((\d+)-1\) × ([\d.]+) MiB")


def per_graph(text: str) -> dict[str, float]:
    """{mode: per-graph bytes} from a log's DEBUG lines (the first rank's)."""
    out: dict[str, float] = {}
    for mode, _, mib in LINE.findall(text):
        out.setdefault(mode, float(mib) * MIB)
    return out


def main(logs: Path) -> None:
    con = connect(".")
    rows = con.execute("""
        SELECT o.observation_id, s.note, m.layers, o.logged_cuda_graph_estimated_bytes, p.cudagraph_piecewise_graphs,
               p.cudagraph_full_graphs, p.cudagraph_first_fixed_bytes, p.cudagraph_forward_bytes_per_token,
               p.cudagraph_split_kv_bytes_per_token, a.cudagraph_min_per_graph_bytes
        FROM calibration c JOIN observations o USING (observation_id) JOIN models m ON m.model_id = o.model_id
        JOIN engine_accounting a ON a.engine_id = o.engine_id
        JOIN engine_memory_pools p ON p.engine_id = o.engine_id AND p.model_id = o.served_id
             AND p.hardware_id = o.hardware_id AND p.tp = o.tp AND p.weights_dtype = c.weights_dtype
             AND p.max_num_batched_tokens = o.max_num_batched_tokens
        JOIN sources s ON s.entry_id = o.observation_id AND s.source_id = 'log'
        WHERE o.logged_cuda_graph_estimated_bytes IS NOT NULL ORDER BY 1""").fetchall()
    data = []
    for oid, note, layers, logged, n_pw, n_full, fixed, fwd, split, floor in rows:
        name = re.search(r"log (\S+\.log)", note).group(1)
        g = per_graph((logs / name).read_text())
        data.append(dict(oid=oid, L=layers, logged=logged, n_pw=n_pw, n_full=n_full, fixed=fixed, fwd=fwd,
                         split=split, floor=floor, pw=g["PIECEWISE"] / layers, full=g["FULL"] / layers))

    def predict(d, c_pw, c_full):
        g_pw, g_full = max(c_pw * d["L"], d["floor"]), max(c_full * d["L"], d["floor"])
        first = max(d["fixed"] + g_pw + d["fwd"] * 512, g_full + d["split"] * 512)
        return first + (d["n_pw"] - 1) * g_pw + (d["n_full"] - 1) * g_full

    def consts(ds):
        return statistics.median(d["pw"] for d in ds), statistics.median(d["full"] for d in ds)

    c = consts(data)
    print(f"constants (all 18): piecewise {c[0] / MIB:.3f} MiB/layer, full {c[1] / MIB:.3f} MiB/layer")
    ins, loo = [], []
    for d in data:
        e_in = (predict(d, *c) - d["logged"]) / GIB
        e_lo = (predict(d, *consts([x for x in data if x is not d])) - d["logged"]) / GIB
        ins.append(abs(e_in))
        loo.append(abs(e_lo))
        print(f"  {d['oid']:40s} logged {d['logged'] / GIB:.2f}  in-sample {e_in:+.3f}  held out {e_lo:+.3f} GiB")
    flat = [abs(0.8 - d["logged"] / GIB) for d in data]
    print(f"in-sample |error| median {statistics.median(ins):.3f} worst {max(ins):.3f} GiB; "
          f"held out median {statistics.median(loo):.3f} worst {max(loo):.3f} GiB; "
          f"flat 0.8 GiB median {statistics.median(flat):.3f} worst {max(flat):.3f} GiB")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
