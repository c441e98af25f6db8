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

/**
 * A projection's notifications, live, over the WebSocket stream (docs/notifications.md): one JSON line
 * per `state_changed`; pings are answered. The line "tailing …" goes to stderr once the stream is live.
 */
export function tail(config: EsctlConfig, projectionId: string, opts: TailOptions, output: Output): Promise<number> {
  const url = new URL(`${config.url.replace(/^http/, 'ws')}/projections/${enc(projectionId)}/stream`);
  if (opts.afterSequence !== undefined) url.searchParams.set('afterSequence', opts.afterSequence);
  return new Promise<number>((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { 'x-api-key': config.apiKey } });
    let seen = 0;
    ws.on('unexpected-response', (_req, res) => {
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
      if (msg.type === 'ping') {
        ws.send(JSON.stringify({ type: 'pong' }));
        return;
      }
      output.out(JSON.stringify(msg));
      if (opts.count !== undefined && ++seen >= opts.count) ws.close(1000);
    });
    ws.on('close', (code, reason) => {
      if (code === 1000 || code === 1005) resolve(0);
      else reject(new ServiceError(`stream closed: ${code} ${reason.toString()}`.trim()));
    });
    ws.on('error', (e) => reject(new ServiceError(`stream: ${e.message}`)));
  });
}
