"""The study's tables, in the seed post's layout, and its CSV files and plot."""

from __future__ import annotations

import csv
import errno
import io
from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from .designs import ALL_DESIGNS as DESIGNS
from .errors import UserError
from .evaluation import RESULT_COLUMNS, RESULT_EXTRA_COLUMNS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

COST_COLUMNS = ["approach", "event", "docs", "input_tokens", "output_tokens", "graph_writes"]
COST_EXTRA_COLUMNS = ["estimated", "graph_only_accuracy", "spent_input_tokens", "spent_output_tokens"]
# The post's cost table ends in milliseconds. They are measured, so they differ between any two runs: they are
# kept apart from the costs (timings.csv, the `pass_timings` table), which stay the same byte for byte.
TIMING_COLUMNS = ["approach", "event", "ms"]


def pct(part: int, whole: int) -> str:
    """"94% (94/100)", rounded half away from zero like the post's C# format; "-" for an empty whole."""
    if whole == 0:
        return "-"
    rounded = Decimal(100 * part) / Decimal(whole)
    return f"{rounded.quantize(Decimal(1), rounding=ROUND_HALF_UP)}% ({part}/{whole})"


def stated(row: dict) -> bool:
    """Whether an answer row expects a value the world states (not "none": the world does not say, yet)."""
    return str(row["expected"]).strip().casefold() != "none"


def summarise(results: Iterable[dict], scenarios: list[str]) -> list[dict]:
    """One row per (design, scenario) in the post's order: accuracy, drifted accuracy and the error split."""
    rows = list(results)
    summary = []
    for design in [d.value for d in DESIGNS]:
        for scenario in scenarios:
            cell = [r for r in rows if r["design"] == design and r["scenario"] == scenario]
            if not cell:
                continue
            drifted = [r for r in cell if r["drifted"]]
            read = [r for r in cell if stated(r)]
            right = sum(r["outcome"] == "correct" for r in cell)
            summary.append({
                "design": design, "scenario": scenario, "answers": len(cell), "correct": right,
                "drifted": len(drifted), "drifted_correct": sum(r["outcome"] == "correct" for r in drifted),
                # answers the world states (not "none"): what a design read, not what it won by abstaining
                "stated": len(read), "stated_correct": sum(r["outcome"] == "correct" for r in read),
                "wrong_no_hedge": sum(r["outcome"] == "wrong" and not r["hedged"] for r in cell),
                "wrong_hedged": sum(r["outcome"] == "wrong" and r["hedged"] for r in cell),
                "abstain": sum(r["outcome"] == "abstain" for r in cell),
                "hedged_when_right": sum(r["outcome"] == "correct" and r["hedged"] for r in cell),
            })
    return summary


def accuracy_table(summary: list[dict]) -> str:
    header = ("Design            Scenario       All answers     Drifted only    Wrong, no hedge  Wrong, hedged  "
              "Abstain  Hedged when right")
    lines = [header, "-" * 120]
    for s in summary:
        lines.append(
            f"{s['design']:<17} {s['scenario']:<14} {pct(s['correct'], s['answers']):<15} "
            f"{pct(s['drifted_correct'], s['drifted']):<15} {s['wrong_no_hedge']:<16} {s['wrong_hedged']:<14} "
            f"{s['abstain']:<8} {pct(s['hedged_when_right'], s['correct'])}"
        )
    return "\n".join(lines)


def accuracy_markdown(summary: list[dict]) -> str:
    lines = ["| Design | Scenario | All | Drifted | Wrong, no hedge | Wrong, hedged | Abstain | Hedged when right |",
             "|---|---|---|---|---|---|---|---|"]
    for s in summary:
        lines.append(f"| {s['design']} | {s['scenario']} | {pct(s['correct'], s['answers'])} | "
                     f"{pct(s['drifted_correct'], s['drifted'])} | {s['wrong_no_hedge']} | {s['wrong_hedged']} | "
                     f"{s['abstain']} | {pct(s['hedged_when_right'], s['correct'])} |")
    return "\n".join(lines)


def sort_costs(costs: Iterable[dict]) -> list[dict]:
    return sorted(costs, key=lambda c: (c["approach"], c["event"]))


def _ms_of(timings: Iterable[dict] | None) -> dict[tuple[str, int], str]:
    return {(t["approach"], int(t["event"])): str(t["ms"]) for t in timings or []}


def cost_table(costs: list[dict], timings: Iterable[dict] | None = None) -> str:
    """The post's cost table; its ms column from `timings` ("-" where this run timed nothing)."""
    ms = _ms_of(timings)
    lines = ["Approach                        Event  Pages read  Input tokens  Output tokens  Graph writes  ms",
             "-" * 96]
    for c in sort_costs(costs):
        star = "*" if c["estimated"] else ""
        lines.append(f"{c['approach']:<31} {c['event']:<6} {c['docs']:<11} {str(c['input_tokens']) + star:<13} "
                     f"{str(c['output_tokens']) + star:<14} {c['graph_writes']:<13} "
                     f"{ms.get((c['approach'], int(c['event'])), '-')}")
    if timings:
        lines.append("ms: wall-clock time of the pass in this run; the regex extractor parses each page text once "
                     "per process, so a pass over pages already parsed takes under 1 ms and shows 0")
    if any(c["estimated"] for c in costs):
        lines.append("* estimated at 4 characters per token, no model was called")
    return "\n".join(lines)


def _csv_bool(value: object) -> object:
    # The post's C# writes booleans as True/False; keep that so the files diff cleanly against it.
    return str(value) if isinstance(value, bool) else value


def results_csv(results: Iterable[dict]) -> str:
    """The post's results.csv: its columns in its order, the last three always quoted; ours after them."""
    out = io.StringIO()
    out.write(",".join(RESULT_COLUMNS + RESULT_EXTRA_COLUMNS) + "\n")
    for r in results:
        plain = [str(_csv_bool(r[c])) for c in RESULT_COLUMNS[:7]]
        quoted = ['"' + str(r[c]).replace('"', '""') + '"' for c in RESULT_COLUMNS[7:]]
        extra = [str(_csv_bool(r.get(c, False))) for c in RESULT_EXTRA_COLUMNS]
        out.write(",".join(plain + quoted + extra) + "\n")
    return out.getvalue()


def costs_csv(costs: Iterable[dict]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COST_COLUMNS + COST_EXTRA_COLUMNS)
    for c in sort_costs(costs):
        writer.writerow([_csv_bool(c.get(col)) if c.get(col) is not None else ""
                         for col in COST_COLUMNS + COST_EXTRA_COLUMNS])
    return out.getvalue()


def timings_csv(timings: Iterable[dict]) -> str:
    """timings.csv: one row per (approach, event), this run's milliseconds for the pass."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(TIMING_COLUMNS)
    for t in sort_costs(timings):
        writer.writerow([t[col] for col in TIMING_COLUMNS])
    return out.getvalue()


class ReportFolderError(UserError, OSError):
    """The reports cannot be written where they are asked for."""


def check_output_dir(path: Path) -> None:
    """Fail before the study starts, not after it was written, when the reports cannot be written."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".driftlab-write-check"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        if e.errno == errno.ENOSPC:
            raise ReportFolderError(f"cannot write reports to {path}: the disk is full (No space left on device): "
                                    "free space on that disk, or pass --out with a folder on another one") from None
        raise ReportFolderError(f"cannot write reports to {path} ({e.strerror or type(e).__name__}): pass --out "
                                "with a writable directory") from None


def write_text(path: Path, text: str) -> Path:
    return write_bytes(path, text.encode("utf-8"))


def write_bytes(path: Path, data: bytes) -> Path:
    """Write a report whole or not at all: readers never see a half-written file, a failure leaves no
    temporary file, and a folder that cannot take it (a full disk) is one line naming the folder."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        tmp.replace(path)
    except OSError as e:
        if e.errno == errno.ENOSPC:
            raise ReportFolderError(f"cannot write {path.name} to {path.parent}: the disk is full (No space left on "
                                    "device): free space on that disk, or pass --out with a folder on another one, "
                                    "and run again") from None
        raise ReportFolderError(f"cannot write {path.name} to {path.parent} ({e.strerror or type(e).__name__}): "
                                "pass --out with a writable directory") from None
    finally:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass  # the folder itself became unusable: the error above says so
    return path


def accuracy_plot(summary: list[dict], scenarios: list[str]) -> bytes:
    """A grouped bar chart of accuracy by design and scenario, as PNG bytes (deterministic metadata)."""
    plt = _pyplot()
    designs = [d.value for d in DESIGNS if any(s["design"] == d.value for s in summary)]
    fig, ax = plt.subplots(figsize=(8, 3.6), dpi=100)
    width = 0.8 / max(len(designs), 1)
    for i, design in enumerate(designs):
        values = []
        for scenario in scenarios:
            cell = next((s for s in summary if s["design"] == design and s["scenario"] == scenario), None)
            values.append(100 * cell["correct"] / cell["answers"] if cell else 0)
        xs = [j + i * width for j in range(len(scenarios))]
        ax.bar(xs, values, width, label=design)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(scenarios))], scenarios)
    ax.set_ylabel("accuracy, all answers (%)")
    ax.set_ylim(0, 105)
    ax.legend(ncol=len(designs), fontsize=8, loc="lower center")
    ax.set_title("Accuracy by design and drift scenario")
    return _png(fig)


def markdown_table(rows: Iterable[dict], columns: list[str], max_chars: int = 120) -> str:
    """A small markdown table for Dagster metadata; long cells are cut with an ellipsis."""

    def cell(value: object) -> str:
        text = str(value).replace("|", "\\|").replace("\n", " ")
        return text if len(text) <= max_chars else text[: max_chars - 1] + "…"

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(r[c]) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


def same_slice(reference: Iterable[dict], results: Iterable[dict]) -> list[dict]:
    """The reference run's rows for the (scenario, step) pairs the results cover: a run of a slice
    (`--scenario`, `--until`) is compared with the same slice of the whole deterministic study, never with
    answers at checkpoints it did not reach."""
    covered = {(r["scenario"], int(r["step"])) for r in results}
    return [r for r in reference if (r["scenario"], int(r["step"])) in covered]


def two_column_table(ceiling: list[dict], model: list[dict]) -> str:
    """The post's layout: the deterministic ceiling beside the model run, with the model's wrong answers
    split into stated plainly and marked possibly stale. "Stated" is the model run's accuracy on the answers
    the world states (expected value not "none"): on a real handbook many questions are not answered yet, and
    a design that abstains wins those whatever it reads."""
    by = {(s["design"], s["scenario"]): s for s in model}
    lines = ["                                  Deterministic    Model run                Model wrong answers",
             "Design            Scenario        All     Drifted  All     Drifted  Stated   no hedge / hedged",
             "-" * 101]
    for c in ceiling:
        m = by.get((c["design"], c["scenario"]))
        if m is None:
            continue
        p = lambda a, b: "-" if b == 0 else f"{100 * a / b:.0f}%"  # noqa: E731
        abstain = f" (+{m['abstain']} abstain)" if m["abstain"] else ""
        lines.append(f"{c['design']:<17} {c['scenario']:<15} {p(c['correct'], c['answers']):<7} "
                     f"{p(c['drifted_correct'], c['drifted']):<8} {p(m['correct'], m['answers']):<7} "
                     f"{p(m['drifted_correct'], m['drifted']):<8} {p(m['stated_correct'], m['stated']):<8} "
                     f"{m['wrong_no_hedge']} / {m['wrong_hedged']}{abstain}")
    return "\n".join(lines)


def hedging_table(results: list[dict]) -> str:
    """Wrong answers hedged and right answers hedged, per design, with the model's flag and hedge phrases
    counted apart."""
    lines = ["Design            Wrong  Hedged  Share   Flag  Phrase   Right answers hedged",
             "-" * 80]
    for design in [d.value for d in DESIGNS]:
        rows = [r for r in results if r["design"] == design]
        if not rows:
            continue
        wrong = [r for r in rows if r["outcome"] == "wrong"]
        right = [r for r in rows if r["outcome"] == "correct"]
        hedged = sum(r["hedged"] for r in wrong)
        share = f"{100 * hedged / len(wrong):.0f}%" if wrong else "-"
        lines.append(f"{design:<17} {len(wrong):<6} {hedged:<7} {share:<7} "
                     f"{sum(r.get('model_flagged', False) for r in wrong):<5} "
                     f"{sum(r.get('hedge_phrase', False) for r in wrong):<8} "
                     f"{sum(r['hedged'] for r in right)} of {len(right)}")
    return "\n".join(lines)


def hedge_quality(results: list[dict], scenarios: list[str], designs: list[str]) -> str:
    """Hedge precision (hedged answers that were wrong) and recall (wrong answers that were hedged), with
    the share of right answers hedged, per design and scenario."""
    lines = ["Design            Scenario        Hedged  Precision  Wrong  Recall  Right hedged",
             "-" * 80]
    for design in designs:
        for scenario in scenarios:
            cell = [r for r in results if r["design"] == design and r["scenario"] == scenario]
            if not cell:
                continue
            hedged = [r for r in cell if r["hedged"]]
            wrong = [r for r in cell if r["outcome"] == "wrong"]
            right = [r for r in cell if r["outcome"] == "correct"]
            precision = pct(sum(r["outcome"] == "wrong" for r in hedged), len(hedged))
            recall = pct(sum(r["hedged"] for r in wrong), len(wrong))
            lines.append(f"{design:<17} {scenario:<15} {len(hedged):<7} {precision.split(' ')[0]:<10} {len(wrong):<6} "
                         f"{recall.split(' ')[0]:<7} {pct(sum(r['hedged'] for r in right), len(right))}")
    return "\n".join(lines)


def _png(fig: Figure) -> bytes:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})  # no version stamp: same rows, same bytes
    plt.close(fig)
    return buf.getvalue()


def _pyplot():  # matplotlib.pyplot, imported on first use
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _cost_panels(lines: dict[str, list[dict]], x: str, xlabel: str, ylabels: tuple[str, str], title: str,
                 xlog: bool) -> bytes:
    """Two log-scale panels, pages read and input tokens, one line per approach. `lines` maps an approach to
    its points ({x: ..., "docs": ..., "input_tokens": ...}); zero is drawn at 1 so it stays on the scale."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), dpi=100)
    for column, ylabel, ax in zip(("docs", "input_tokens"), ylabels, axes):
        for approach, points in lines.items():
            line = sorted((p[x], max(float(p[column] or 0), 1.0)) for p in points)
            ax.plot([a for a, _ in line], [b for _, b in line], marker="o", label=approach)
        if xlog:
            ax.set_xscale("log")
        else:
            ax.set_xticks(sorted({p[x] for points in lines.values() for p in points}))
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
    axes[0].legend(fontsize=8)
    fig.suptitle(title)
    return _png(fig)


def cost_plot(costs: Iterable[dict]) -> bytes:
    """What keeping the graph current costs per event, one line per approach: pages read and input tokens
    (log scale, so a patch's handful of pages and a rebuild's thousands both show), as PNG bytes."""
    lines: dict[str, list[dict]] = {}
    for c in sort_costs(costs):
        lines.setdefault(c["approach"], []).append({"event": int(c["event"]), "docs": int(c["docs"] or 0),
                                                    "input_tokens": int(c["input_tokens"] or 0)})
    return _cost_panels(lines, "event", "event", ("pages read (log)", "input tokens (log)"),
                        "Cost of keeping the graph current, per event", xlog=False)


def cost_curve_plot(points: list[dict]) -> bytes:
    """Cost per event against corpus size, one line per approach (log-log): a patch stays flat while a
    rebuild grows with the corpus. A point is {"pages": corpus size, "approach", "docs": mean pages read
    per event, "input_tokens": mean input tokens per event}."""
    lines: dict[str, list[dict]] = {}
    for p in points:
        lines.setdefault(p["approach"], []).append(p)
    return _cost_panels(lines, "pages", "pages in the corpus", ("pages read per event", "input tokens per event"),
                        "Cost per event as the corpus grows", xlog=True)
