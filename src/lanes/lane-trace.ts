/** TEMPORARY (issue 25 item 3 investigation): per-hop timings of BullMQ lanes, printed every 5 s with LANE_TRACE=1. */
const on = process.env.LANE_TRACE === '1';
const t0 = new Map<string, number>();
const last = new Map<string, number>();
const hops = new Map<string, number[]>();
let timer: NodeJS.Timeout | undefined;
export function trace(id: string, stage: string, extra?: () => string): void {
  if (!on) return;
  const now = performance.now();
  if (stage === 'wake') {
    if (!t0.has(id)) t0.set(id, now);
    last.set(id, now);
    return;
  }
  const prev = last.get(id);
  if (prev === undefined) return;
  let h = hops.get(stage);
  if (!h) hops.set(stage, (h = []));
  h.push(now - prev);
  last.set(id, now);
  if (stage === 'done') {
    let tot = hops.get('TOTAL');
    if (!tot) hops.set('TOTAL', (tot = []));
    tot.push(now - t0.get(id)!);
    t0.delete(id);
    last.delete(id);
  }
  timer ??= setInterval(() => {
    const out = [...hops].map(([k, v]) => {
      v.sort((a, b) => a - b);
      return `${k} n=${v.length} p50=${v[Math.floor(v.length / 2)].toFixed(1)} p99=${v[Math.floor(v.length * 0.99)].toFixed(1)}`;
    });
    hops.clear();
    console.log(`[lane-trace] ${out.join(' | ')}${extra ? ' ' + extra() : ''}`);
  }, 5000).unref();
}
