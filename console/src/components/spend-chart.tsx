import { useEffect, useRef } from 'preact/hooks';
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';
import { formatMicros } from '../lib/format.js';
import type { Spend } from '../lib/spend.js';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip, Legend);

/** Models drawn as their own series; the rest are summed as "other models". */
const SERIES = 6;
const PALETTE = ['#6366f1', '#10b981', '#f59e0b', '#ef4444', '#06b6d4', '#a855f7', '#94a3b8'];

const css = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

/** The bars' heights are the amounts themselves, in integer micro-USD: no amount passes through a float of dollars. */
function datasets(spend: Spend) {
  const shown = spend.models.slice(0, SERIES);
  const rest = spend.models.slice(SERIES);
  const sets = shown.map((m, i) => ({ label: m.model, data: [...spend.byDay.get(m.model)!], backgroundColor: PALETTE[i]! }));
  if (rest.length) {
    const other = spend.days.map((_, d) => rest.reduce((sum, m) => sum + spend.byDay.get(m.model)![d]!, 0));
    sets.push({ label: `${rest.length} other models`, data: other, backgroundColor: PALETTE[SERIES]! });
  }
  return sets;
}

/**
 * Spend by day, stacked by model, drawn by Chart.js on a canvas. The numbers are also in the
 * tables beside it, so the chart's text alternative is a one-line summary.
 */
export function SpendChart(props: { spend: Spend }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const dark = matchMedia('(prefers-color-scheme: dark)');
    let chart: Chart | undefined;
    const draw = () => {
      chart?.destroy();
      const text = css('--muted');
      const grid = css('--border');
      chart = new Chart(canvas.current!, {
        type: 'bar',
        data: { labels: props.spend.days.map((d) => d.slice(5)), datasets: datasets(props.spend) },
        options: {
          responsive: true,
          maintainAspectRatio: false,
          animation: false,
          scales: {
            x: { stacked: true, ticks: { color: text, maxRotation: 0, autoSkip: true }, grid: { display: false } },
            // Ticks at whole micro-USD, written as every other amount is: a sub-cent day reads
            // $0.0005, $0.001, … rather than $0.00 all the way up.
            y: { stacked: true, ticks: { color: text, precision: 0, callback: (v) => formatMicros(Math.round(Number(v))) }, grid: { color: grid } },
          },
          plugins: {
            legend: { position: 'bottom', labels: { color: text, boxWidth: 12 } },
            tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${formatMicros(Number(c.raw))}` } },
          },
        },
      });
    };
    draw();
    dark.addEventListener('change', draw);
    return () => {
      dark.removeEventListener('change', draw);
      chart?.destroy();
    };
  }, [props.spend]);
  const { spend } = props;
  return (
    <div class="chart-box">
      <canvas
        ref={canvas}
        role="img"
        aria-label={`Spend by day, stacked by model: ${formatMicros(spend.totalMicros)} over ${spend.jobs} jobs from ${spend.days[0]} to ${spend.days.at(-1)}`}
      />
    </div>
  );
}
