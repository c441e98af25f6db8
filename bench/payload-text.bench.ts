import { recordPayloadTexts } from '../src/common/json-source-text';

/**
 * What keeping an append's payload text costs per body (issue 11), beside the JSON.parse before it:
 * the fast-path check on plain bodies (single, batch of 100) and the source-text scan on a body with
 * digits a double would change. Three runs each. `node dist/bench/payload-text.bench.js`.
 */
const batch = JSON.stringify({
  aggregateId: 'ledger-1',
  events: Array.from({ length: 100 }, (_, k) => ({ eventType: 'Line', data: { amount: k, i: 12345 } })),
});
const single = JSON.stringify({ aggregateId: 'acct-1', eventType: 'Deposited', data: { amount: 10, i: 12345 } });
const exact =
  '{"aggregateId":"pay-1","eventType":"Paid","data":{"amount":12345678901234567.89,"price":79.90,"id":9007199254740993,"i":123}}';

function microseconds(fn: () => unknown, n: number): number {
  for (let i = 0; i < n / 10; i++) fn();
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  return Number(process.hrtime.bigint() - start) / n / 1000;
}

for (const [name, body, n] of [
  ['single append body', single, 200_000],
  ['batch ×100 body', batch, 20_000],
  ['exact-decimals body (scan)', exact, 200_000],
] as const) {
  const runs = [1, 2, 3].map(() => {
    const parsed = JSON.parse(body);
    const parse = microseconds(() => JSON.parse(body), n);
    const record = microseconds(() => recordPayloadTexts(body, parsed), n);
    return `${record.toFixed(2)} µs (JSON.parse ${parse.toFixed(2)} µs)`;
  });
  console.log(`${name}: ${runs.join(' / ')}`);
}
