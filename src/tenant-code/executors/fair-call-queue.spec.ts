import { FairCallQueue } from './fair-call-queue';

interface Call {
  tenantId: string;
  n: number;
}
const calls = (tenantId: string, count: number, from = 1): Call[] => Array.from({ length: count }, (_, i) => ({ tenantId, n: from + i }));
const names = (cs: Call[]) => cs.map((c) => `${c.tenantId}${c.n}`);
const always = () => true;

describe('FairCallQueue', () => {
  it('serves tenants in turn, one call each per round, whatever the order they queued in', () => {
    const q = new FairCallQueue<Call>(100);
    for (const c of [...calls('a', 10), ...calls('b', 1), ...calls('c', 2)]) q.push(c);
    expect(names(q.take(5, always))).toEqual(['a1', 'b1', 'c1', 'a2', 'c2']);
    expect(names(q.take(100, always))).toEqual(['a3', 'a4', 'a5', 'a6', 'a7', 'a8', 'a9', 'a10']);
    expect(q.size).toBe(0);
  });

  it('sends a newcomer’s call with the next request however deep another tenant’s backlog', () => {
    const q = new FairCallQueue<Call>(100);
    for (const c of calls('flood', 1000)) q.push(c);
    q.take(3, always);
    q.push({ tenantId: 'small', n: 1 });
    expect(names(q.take(2, always))).toEqual(['flood4', 'small1']);
  });

  it('rotates the turn between requests', () => {
    const q = new FairCallQueue<Call>(100);
    for (const c of [...calls('a', 3), ...calls('b', 3)]) q.push(c);
    expect([q.take(1, always), q.take(1, always), q.take(1, always)].map((t) => names(t)[0])).toEqual(['a1', 'b1', 'a2']);
  });

  it('caps the calls of one tenant in flight until they are answered', () => {
    const q = new FairCallQueue<Call>(2);
    for (const c of [...calls('a', 5), ...calls('b', 1)]) q.push(c);
    expect(names(q.take(10, always))).toEqual(['a1', 'b1', 'a2']);
    expect(q.take(10, always)).toEqual([]);
    q.settled('a');
    expect(names(q.take(10, always))).toEqual(['a3']);
  });

  it('holds a tenant whose next call is not ready, keeping its order, and serves the others', () => {
    const q = new FairCallQueue<Call>(100);
    for (const c of [...calls('a', 2), ...calls('b', 2)]) q.push(c);
    const notA1 = (c: Call) => !(c.tenantId === 'a' && c.n === 1);
    expect(names(q.take(10, notA1))).toEqual(['b1', 'b2']);
    expect(names(q.take(10, always))).toEqual(['a1', 'a2']);
  });

  it('puts calls back in front of their tenants’ queues in the order given', () => {
    const q = new FairCallQueue<Call>(100);
    for (const c of calls('a', 4)) q.push(c);
    const sent = q.take(2, always);
    q.settled('a');
    q.settled('a');
    q.unshift(sent);
    expect(names(q.take(10, always))).toEqual(['a1', 'a2', 'a3', 'a4']);
  });

  it('hands over a tenant’s queued calls in order and keeps nothing of an idle tenant', () => {
    const q = new FairCallQueue<Call>(100);
    for (const c of [...calls('a', 3), ...calls('b', 1)]) q.push(c);
    expect(names(q.removeTenant('a'))).toEqual(['a1', 'a2', 'a3']);
    expect(q.size).toBe(1);
    q.take(10, always);
    q.settled('b');
    expect(q.tenantsWaiting).toBe(0);
    expect(q.size).toBe(0);
  });
});

describe('FairCallQueue, urgent calls', () => {
  it('sends a tenant’s urgent call before its own background backlog, each kind in its order', () => {
    const q = new FairCallQueue<Call & { urgent?: boolean }>(100);
    for (const c of calls('a', 200)) q.push(c); // the lanes' calls of a tenant with many projections
    q.push({ tenantId: 'a', n: 1001, urgent: true }); // then its next append's reducer
    q.push({ tenantId: 'a', n: 1002, urgent: true });
    expect(names(q.take(3, always))).toEqual(['a1001', 'a1002', 'a1']);
    expect(names(q.take(2, always))).toEqual(['a2', 'a3']);
  });

  it('keeps the kinds apart when calls come back, and hands them over urgent first', () => {
    const q = new FairCallQueue<Call & { urgent?: boolean }>(100);
    for (const c of calls('a', 3)) q.push(c);
    q.push({ tenantId: 'a', n: 9, urgent: true });
    const sent = q.take(2, always); // a9, a1
    expect(names(sent)).toEqual(['a9', 'a1']);
    q.settled('a');
    q.settled('a');
    q.unshift(sent);
    expect(names(q.removeTenant('a'))).toEqual(['a9', 'a1', 'a2', 'a3']);
    expect(q.size).toBe(0);
  });
});
