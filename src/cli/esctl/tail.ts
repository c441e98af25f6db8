import { WebSocket } from 'ws';
import { enc, Output } from './deploy';
import { EsctlConfig } from './esctl-config';
import { ServiceError } from './service-client';

export interface TailOptions {
  /** Replay after this notification sequence first (else live only). */
  afterSequence?: string;
  /** Stop after this many notifications (else until interrupted). */
  count?: number;
}

/** What to do when the stream closes: done, open again after a sequence, or fail with the server's reason. */
export type AfterClose = { done: true } | { resumeAfter: string } | { fail: string };

/** Reconnects in a row without a notification between them before tail gives up. */
const MAX_RESUMES = 5;

/**
 * The close codes of docs/notifications.md: 4008 SLOW_CONSUMER names the sequence to resume after;
 * a dropped connection (1006, no close frame) resumes after the last notification printed (or where it
 * started); 4010 CURSOR_EXPIRED, 4001 KEY_REVOKED, 4000 and the rest end tail with their reason.
 */
export function afterClose(code: number, reason: string, lastSequence: string | undefined): AfterClose {
  if (code === 1000 || code === 1005) return { done: true };
  if (code === 4008) {
    try {
      const r = JSON.parse(reason);
      if (r.resumeAfterSequence !== undefined) return { resumeAfter: String(r.resumeAfterSequence) };
    } catch {
      /* no JSON reason: fall through to the last printed one */
    }
    if (lastSequence !== undefined) return { resumeAfter: lastSequence };
  }
  if (code === 1006 && lastSequence !== undefined) return { resumeAfter: lastSequence };
  return { fail: `stream closed: ${code} ${reason}`.trim() };
}

/**
 * A projection's notifications, live, over the WebSocket stream (docs/notifications.md): one JSON line
 * per `state_changed`; pings are answered; a slow-consumer close or a dropped connection resumes where
 * it stopped, so no notification is skipped or printed twice. "tailing …" goes to stderr once it is live.
 */
export async function tail(config: EsctlConfig, projectionId: string, opts: TailOptions, output: Output): Promise<number> {
  let after = opts.afterSequence;
  let printed = 0;
  let resumes = 0;
  for (;;) {
    const before = printed;
    const closed = await stream(config, projectionId, after, output, (msg) => {
      output.out(JSON.stringify(msg));
      if (msg.sequence !== undefined) after = String(msg.sequence);
      return opts.count !== undefined && ++printed >= opts.count;
    });
    const next = afterClose(closed.code, closed.reason, after);
    if ('done' in next) return 0;
    if ('fail' in next) throw new ServiceError(next.fail);
    resumes = printed > before ? 1 : resumes + 1;
    if (resumes > MAX_RESUMES) throw new ServiceError(`stream closed ${MAX_RESUMES} times in a row: ${closed.code} ${closed.reason}`);
    output.err(`stream closed (${closed.code}); resuming after sequence ${next.resumeAfter}`);
    after = next.resumeAfter;
  }
}

/** One connection: resolves with its close code and reason; `onNotification` returning true closes it normally. */
function stream(
  config: EsctlConfig,
  projectionId: string,
  afterSequence: string | undefined,
  output: Output,
  onNotification: (msg: any) => boolean,
): Promise<{ code: number; reason: string }> {
  const url = new URL(`${config.url.replace(/^http/, 'ws')}/projections/${enc(projectionId)}/stream`);
  if (afterSequence !== undefined) url.searchParams.set('afterSequence', afterSequence);
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { 'x-api-key': config.apiKey } });
    let refused = false;
    ws.on('unexpected-response', (_req, res) => {
      refused = true;
      let body = '';
      res.on('data', (d: Buffer) => (body += d));
      res.on('end', () => {
        let said = body;
        try {
          const b = JSON.parse(body);
          said = `${b.error}: ${b.message ?? ''}`;
        } catch {
          /* not JSON */
        }
        reject(new ServiceError(`${res.statusCode} ${said}`.trim(), res.statusCode));
      });
    });
    ws.on('open', () => output.err(`tailing projection ${projectionId} (Ctrl-C to stop)`));
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString());
      if (msg.type === 'ping') ws.send(JSON.stringify({ type: 'pong' }));
      else if (onNotification(msg)) ws.close(1000);
    });
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() }));
    ws.on('error', (e) => {
      // A refused upgrade is answered by 'unexpected-response'; a connection that never opened fails here.
      if (!refused && ws.readyState !== WebSocket.OPEN) reject(new ServiceError(`stream: ${e.message}`));
    });
  });
}
