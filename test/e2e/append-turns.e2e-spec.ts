import * as net from 'node:net';
import { Client, newTenant, RunningService, startService } from '../support/service-harness';
import { elapse } from '../support/wait';

/**
 * Issue 25 item 5: a tenant's append requests beyond APPEND_IN_FLIGHT_PER_TENANT wait for a turn
 * before their bodies are read, and past APPEND_QUEUED_PER_TENANT waiting they are refused; another
 * tenant's appends never wait on them. Tenant A's requests here announce a body and never send it,
 * so each one holds whatever it got (a turn, or a place in the queue) until the test lets go.
 */
describe('per-tenant append turns', () => {
  let svc: RunningService;
  let a: Client;
  let b: Client;
  const sockets: net.Socket[] = [];

  beforeAll(async () => {
    svc = await startService({
      APPEND_IN_FLIGHT_PER_TENANT: '1',
      APPEND_QUEUED_PER_TENANT: '1',
      // B's append below keeps the turns on for A for the whole test.
      APPEND_TURNS_WINDOW_MS: '600000',
      BODY_READ_TIMEOUT_MS: '20000',
    });
    a = await newTenant(svc.url, 'flooder');
    b = await newTenant(svc.url, 'neighbour');
  }, 120_000);
  afterAll(async () => {
    sockets.forEach((s) => s.destroy());
    await svc?.close();
  });

  /** A POST /events/batch whose body never comes; resolves with what was answered, if anything, by `until`. */
  function stalledAppend(key: string): { answer: Promise<string> } {
    const { hostname, port } = new URL(svc.url);
    const socket = net.connect({ host: hostname, port: Number(port) });
    sockets.push(socket);
    let text = '';
    const answer = new Promise<string>((resolve) => {
      socket.setEncoding('utf8');
      socket.on('data', (c: string) => {
        text += c;
        const head = text.indexOf('\r\n\r\n');
        const length = /content-length: (\d+)/i.exec(text)?.[1];
        if (head >= 0 && length !== undefined && text.length >= head + 4 + Number(length)) resolve(text);
      });
      socket.on('close', () => resolve(text));
      socket.on('error', () => undefined);
    });
    socket.write(
      `POST /events/batch HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\nx-api-key: ${key}\r\ncontent-length: 1000\r\n\r\n{`,
    );
    return { answer };
  }

  it("answers another tenant at once while one tenant's appends hold every turn and queue place, and refuses that tenant's next with 429", async () => {
    // The turns hold while another tenant appends: B does, first.
    expect((await b.post('/events', { aggregateId: 'b-0', eventType: 'E', data: {} })).status).toBe(201);
    // Three stalled appends of A: whichever order they arrive in, one holds A's one turn (its body
    // never completes), one holds the one queue place, and the third is refused.
    const stalled = [stalledAppend(a.key), stalledAppend(a.key), stalledAppend(a.key)];
    const firstAnswer = await Promise.race(stalled.map((s, i) => s.answer.then((text) => ({ i, text }))));
    expect(firstAnswer.text).toMatch(/^HTTP\/1\.1 429 /);
    const body = JSON.parse(firstAnswer.text.slice(firstAnswer.text.indexOf('\r\n\r\n') + 4));
    expect(body).toMatchObject({ error: 'RATE_LIMITED', policy: 'appends-in-flight', retryAfterSeconds: 1 });

    const t0 = Date.now();
    const res = await b.post('/events', { aggregateId: 'b-1', eventType: 'E', data: {} });
    expect(res.status).toBe(201);
    // B did not wait for A's stalled requests (they hold their turns for 20 s).
    expect(Date.now() - t0).toBeLessThan(10_000);

    // The other two of A are still unanswered: one waits for its body, the other for a turn.
    const others = stalled.filter((_, i) => i !== firstAnswer.i);
    const pending = await Promise.race([
      Promise.race(others.map((s) => s.answer)).then(() => 'answered'),
      new Promise((r) => setImmediate(() => setImmediate(() => r('pending')))),
    ]);
    expect(pending).toBe('pending');
  }, 60_000);

  it("frees a tenant's turns when its clients go away", async () => {
    sockets.splice(0).forEach((s) => s.destroy());
    // Both stalled requests closed: A appends again once their turns are given back.
    let res: { status: number } | undefined;
    for (let i = 0; i < 200 && res?.status !== 201; i++) {
      res = await a.post('/events', { aggregateId: 'a-2', eventType: 'E', data: {} });
      if (res.status !== 201) await elapse(50, 'retry interval: the append is refused until the other turn ends');
    }
    expect(res?.status).toBe(201);
  }, 60_000);
});
