import type { Latest } from './metrics.js';

// The Prometheus text exposition format (0.0.4): each series' newest point as a gauge, with its
// timestamp, so a scrape shows what the account pushed, not when it was scraped. Names and
// label names outside Prometheus' alphabet (`http.latency`) have the odd characters as `_`.

const metricName = (n: string) => n.replace(/[^a-zA-Z0-9_:]/g, '_').replace(/^([0-9])/, '_$1');
const labelName = (n: string) => n.replace(/[^a-zA-Z0-9_]/g, '_').replace(/^([0-9])/, '_$1');
const labelValue = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

function sample(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

export function prometheusText(points: Latest[]): string {
  const byName = new Map<string, string[]>();
  for (const p of points) {
    const name = metricName(p.name);
    const tags = Object.entries(JSON.parse(p.tags) as Record<string, string>);
    const labels = tags.length ? `{${tags.map(([k, v]) => `${labelName(k)}="${labelValue(v)}"`).join(',')}}` : '';
    const lines = byName.get(name) ?? [];
    lines.push(`${name}${labels} ${sample(p.value)} ${p.ts}`);
    byName.set(name, lines);
  }
  let out = '';
  for (const [name, lines] of [...byName].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    out += `# TYPE ${name} gauge\n${lines.join('\n')}\n`;
  return out;
}
