import * as http from 'node:http';
import * as https from 'node:https';
import { WebhookUrlGuard } from './webhook-url-guard';

export type SendResult = { ok: true; status: number } | { ok: false; error: string };

const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * One POST to a tenant's receiver. The address is checked (SSRF) at every attempt and the
 * connection goes to exactly the address checked (no second DNS answer); redirects are not
 * followed (a 3xx could point inside); only 2xx counts as delivered.
 */
export class WebhookSender {
  constructor(
    private readonly guard: WebhookUrlGuard,
    private readonly timeoutMs: number,
  ) {}

  async send(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    let target;
    try {
      target = await this.guard.resolvePublic(url);
    } catch (e) {
      return { ok: false, error: e instanceof Error ? e.message : String(e) };
    }
    const { url: u, address, family } = target;
    const lib = u.protocol === 'https:' ? https : http;
    return new Promise<SendResult>((resolve) => {
      const req = lib.request(
        u,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'user-agent': 'event-sourcing-service-webhooks/1',
            ...headers,
          },
          timeout: this.timeoutMs,
          lookup: (_host, opts, cb) => {
            if ((opts as { all?: boolean }).all) (cb as any)(null, [{ address, family }]);
            else (cb as any)(null, address, family);
          },
        },
        (res) => {
          let seen = 0;
          res.on('data', (c: Buffer) => {
            seen += c.length;
            if (seen > MAX_RESPONSE_BYTES) res.destroy();
          });
          res.on('error', () => undefined);
          res.on('close', () => {
            const status = res.statusCode ?? 0;
            resolve(status >= 200 && status < 300 ? { ok: true, status } : { ok: false, error: `HTTP ${status}` });
          });
          res.resume();
        },
      );
      const timer = setTimeout(() => req.destroy(new Error(`timed out after ${this.timeoutMs} ms`)), this.timeoutMs);
      req.on('timeout', () => req.destroy(new Error(`timed out after ${this.timeoutMs} ms`)));
      req.on('error', (e) => resolve({ ok: false, error: e.message }));
      req.on('close', () => clearTimeout(timer));
      req.end(body);
    });
  }
}
