"""The report's plots: PNG bytes drawn from the numbers given, the same bytes for the same numbers."""

from driftlab_dagster.core.reports import cost_curve_plot, cost_plot

PNG = b"\x89PNG\r\n\x1a\n"


def _curve(rebuild_at_4000: int) -> list[dict]:
    return [
        {"pages": 40, "approach": "full re-extract", "docs": 40, "input_tokens": 9988},
        {"pages": 4000, "approach": "full re-extract", "docs": rebuild_at_4000, "input_tokens": 995533},
        {"pages": 40, "approach": "patch changed pages", "docs": 6, "input_tokens": 1500},
        {"pages": 4000, "approach": "patch changed pages", "docs": 6, "input_tokens": 1500},
        {"pages": 40, "approach": "patch from record", "docs": 0, "input_tokens": 0},  # zero stays on a log scale
    ]


def test_cost_curve_plot_is_a_png_drawn_from_its_points():
    png = cost_curve_plot(_curve(4000))
    assert png.startswith(PNG)
    assert cost_curve_plot(_curve(4000)) == png
    assert cost_curve_plot(_curve(400)) != png


def test_cost_plot_draws_one_line_per_approach_per_event():
    costs = [{"approach": a, "event": e, "docs": d, "input_tokens": d * 250}
             for e in (1, 2) for a, d in (("full re-extract", 40), ("patch changed pages", e * 3))]
    png = cost_plot(costs)
    assert png.startswith(PNG)
    assert cost_plot(list(reversed(costs))) == png  # drawn in event order whatever the row order
    assert cost_plot([{**c, "docs": c["docs"] + 1} for c in costs]) != png
