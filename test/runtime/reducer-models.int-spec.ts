import { ChildProcess, spawn } from 'node:child_process';
import * as fc from 'fast-check';
import { findRuntimeDll } from '../../src/tenant-code/host/host-launcher';
import { REDUCERS, runCases } from '../support/lossless-arbitraries';
import { jsonText } from '../support/raw-json';
import { exampleSources, fixtureSources } from '../support/tenant-code';

/**
 * The TypeScript models that state-equivalence.e2e-spec.ts compares every path with must be what
 * the .NET host itself writes. Checked here on the host's own stdout lines, bypassing the service
 * (whose JSON handling is what the e2e suites test), for many random sequences.
 */

jest.setTimeout(120_000);

/** The real host in mode 'all', spoken to in raw protocol lines (no JSON.parse of results). */
class RawHost {
  private readonly child: ChildProcess;
  private buffer = '';
  private readonly waiting = new Map<number, (line: string) => void>();
  private next = 0;

  constructor() {
    this.child = spawn('dotnet', [findRuntimeDll(), '--mode', 'all'], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.child.stdout!.setEncoding('utf8');
    this.child.stdout!.on('data', (d: string) => {
      this.buffer += d;
      let i;
      while ((i = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, i);
        this.buffer = this.buffer.slice(i + 1);
        this.waiting.get(Number(/^\{"id":(\d+)/.exec(line)?.[1]))?.(line);
      }
    });
  }

  /** Sends `{"id":…,"type":type,"payload":payloadText}` and resolves with the response line. */
  call(type: string, payloadText: string): Promise<string> {
    const id = ++this.next;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.child.stdin!.write(`{"id":${id},"type":"${type}","payload":${payloadText}}\n`);
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGKILL');
    await exited;
  }
}

const SOURCES: Record<string, { path: string; content: string }[]> = {
  bank: exampleSources('bank-account'),
  orders: exampleSources('orders'),
  ledger: fixtureSources('lossless', ['Ledger.cs', 'LedgerReducer.cs']),
};

describe('the reducer models of the lossless tests', () => {
  let host: RawHost;
  afterAll(() => host?.stop());

  beforeAll(async () => {
    host = new RawHost();
    for (const r of REDUCERS) {
      const compiled = JSON.parse(
        await host.call('compile', JSON.stringify({ files: SOURCES[r.reducerId], kind: 'reducer', assemblyName: r.reducerId })),
      );
      if (!compiled.payload.ok) throw new Error(`${r.reducerId}: ${JSON.stringify(compiled.payload)}`);
      await host.call('load', JSON.stringify({ assemblyId: r.reducerId, assembly: compiled.payload.assembly }));
    }
  });

  it('give, byte for byte, every state the host writes for random sequences', async () => {
    await fc.assert(
      fc.asyncProperty(runCases, async (cases) => {
        for (const [k, r] of REDUCERS.entries()) {
          const events = cases[k].events.map((e, i) =>
            jsonText({
              eventId: `e${i}`,
              aggregateId: `${r.type}-1`,
              aggregateType: r.type,
              eventType: e.eventType,
              version: i + 1,
              timestamp: '2024-01-01T00:00:00.000Z',
              data: e.data,
              metadata: null,
              correlationId: null,
              causationId: null,
            }),
          );
          const line = await host.call(
            'apply',
            `{"assemblyId":"${r.reducerId}","className":"${r.className}","groups":[{"state":null,"events":[${events.join(',')}]}]}`,
          );
          // The host answers each state as a string holding its JSON text exactly as written.
          const result = JSON.parse(line).payload?.results?.[0];
          const states = result?.ok ? (result.states as string[]).join(',') : undefined;
          expect({ reducer: r.type, states: states ?? line }).toEqual({ reducer: r.type, states: r.model(cases[k].events).join(',') });
        }
      }),
      { numRuns: 300 },
    );
  });
});
