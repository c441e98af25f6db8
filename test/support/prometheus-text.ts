// The parser ships no types: its output is described here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const parsePrometheusText: (text: string) => ParsedFamily[] = require('parse-prometheus-text-format');

interface ParsedFamily {
  name: string;
  help: string;
  type: string;
  metrics: { value?: string; labels?: Record<string, string> }[];
}

export interface Series {
  labels: Record<string, string>;
  value: number;
}

/** A scrape of GET /metrics, parsed with parse-prometheus-text-format (a Prometheus text-format parser). */
export interface Scrape {
  /** Every family with its type (COUNTER, GAUGE, HISTOGRAM) and help. */
  families: Map<string, { type: string; help: string }>;
  /** The samples of one series name (a histogram's `_count`, `_sum`, `_bucket` series by their own names). */
  series(name: string): Series[];
  /** The sum of the samples of `name` whose labels include `labels` (0 when none). */
  sum(name: string, labels?: Record<string, string>): number;
}

/**
 * The parser folds a histogram's samples into one and drops their labels when the histogram has
 * labels of its own, so samples are read from a second parse in which histogram families are
 * untyped: each of `_bucket`, `_count` and `_sum` is then a series with its labels.
 */
export function parseScrape(text: string): Scrape {
  const families = new Map(parsePrometheusText(text).map((f) => [f.name, { type: f.type, help: f.help }]));
  const flat = parsePrometheusText(text.replace(/^# TYPE (\S+) (histogram|summary)$/gm, '# TYPE $1 untyped'));
  const byName = new Map<string, Series[]>();
  for (const f of flat) {
    const list = byName.get(f.name) ?? [];
    for (const m of f.metrics) list.push({ labels: m.labels ?? {}, value: Number(m.value) });
    byName.set(f.name, list);
  }
  const series = (name: string) => byName.get(name) ?? [];
  return {
    families,
    series,
    sum: (name, labels = {}) =>
      series(name)
        .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
        .reduce((n, s) => n + s.value, 0),
  };
}
