import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

const COLORS = ["#2f6feb", "#e8590c", "#12b886", "#ae3ec9"];

export interface LineSeries {
  label: string;
  values: number[];
}

/** Draws (or redraws) a line chart of `series` over `dates` (YYYY-MM-DD or RFC 3339) into `target`. */
export function drawLines(target: HTMLElement, dates: string[], series: LineSeries[]): void {
  target.replaceChildren();
  if (dates.length === 0) {
    target.textContent = "No data in this window.";
    return;
  }
  const xs = dates.map((date) => Date.parse(date.length === 10 ? `${date}T00:00:00Z` : date) / 1000);
  const width = Math.max(280, target.clientWidth || 600);
  const options: uPlot.Options = {
    width,
    height: 240,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
    series: [
      {},
      ...series.map((line, index) => ({
        label: line.label,
        stroke: COLORS[index % COLORS.length],
        width: 2,
        points: { show: dates.length < 40 },
      })),
    ],
    axes: [{}, { size: 60 }],
    legend: { live: false },
  };
  new uPlot(options, [xs, ...series.map((line) => line.values)], target);
}
