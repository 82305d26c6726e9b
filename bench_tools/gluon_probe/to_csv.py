"""The probe's JSON (probe.py / probe2.py) as a tuning record: the harness's columns, copy_ratio against the
copy of the same bytes in the same run (the backward's copy is x + dy -> y: three tensors, as the backward)."""
import csv
import json
import sys

COLUMNS = ["provider", "direction", "dtype", "M", "N", "ms_p20", "ms_median", "ms_p80", "gbps", "copy_ratio",
           "status", "reason", "case", "settings"]


def rows_of(run: dict) -> list[dict]:
    copies = {(r["M"], r["N"], r["dtype"], r["direction"]): r["ms"][0] for r in run["rows"]
              if r["provider"] in ("copy", "copy3")}
    out = []
    for r in run["rows"]:
        key = (r["M"], r["N"], r["dtype"], r["direction"])
        tensors = 2 if r["direction"] == "forward" else 3
        nbytes = tensors * r["M"] * r["N"] * (4 if r["dtype"] == "float32" else 2)
        provider = r["provider"]
        kernel = provider.startswith(("gluon", "g2"))
        settings = {k: r[k] for k in ("grid", "err", "n_regs", "n_spills", "path") if k in r}
        row = {"provider": "gluon" if kernel else ("copy" if provider == "copy3" else provider),
               "direction": r["direction"], "dtype": r["dtype"], "M": r["M"], "N": r["N"],
               "case": provider if kernel else "", "settings": json.dumps(settings) if settings else ""}
        if "error" in r:
            row.update(status="error", reason=r["error"])
        else:
            median, p20, p80 = r["ms"]
            row.update(ms_p20=p20, ms_median=median, ms_p80=p80, gbps=nbytes / median / 1e6,
                       copy_ratio=copies[key] / median, status="ok")
        out.append(row)
    return out


if __name__ == "__main__":
    src, dst = sys.argv[1], sys.argv[2]
    with open(src) as fh, open(dst, "w", newline="") as out:
        writer = csv.DictWriter(out, COLUMNS)
        writer.writeheader()
        writer.writerows(rows_of(json.load(fh)))
