import { createHmac } from 'node:crypto';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import { WebhookSigner } from '../../src/notifications/webhooks/webhook-signer';

export interface ReceivedWebhook {
  sequence: number;
  body: any;
  /** The body's bytes exactly as received. */
  raw: Buffer;
  headers: Record<string, string | undefined>;
  /** Which of the receiver's secrets verified it (index into `secrets`), -1 if none. */
  verifiedBy: number;
  /** Epoch ms when it was accepted. */
  at: number;
}

/**
 * A local receiver that verifies Standard Webhooks signatures against the secrets it trusts
 * (401 when none matches, so a bad signature is a failed delivery). `failFirst` makes the first
 * n attempts of a sequence answer 500.
 */
export class WebhookReceiver {
  readonly accepted: ReceivedWebhook[] = [];
  readonly attempts = new Map<number, number>();
  rejectedSignatures = 0;
  secrets: string[] = [];
  failFirst = new Map<number, number>();
  /** Answer 503 to everything (a receiver that is down). */
  down = false;
  /** The first attempt of these sequences never gets an answer (a receiver that hangs). */
  hangFirst = new Set<number>();
  /** Every answer waits this long (a slow receiver); `inFlight`/`maxInFlight` count requests being answered. */
  delayMs = 0;
  inFlight = 0;
  maxInFlight = 0;
  private server!: http.Server;
  url = '';

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (d: Buffer) => chunks.push(d));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const body = raw.toString('utf8');
        const headers = req.headers as Record<string, string | undefined>;
        // Projection webhooks number by sequence, event webhooks by position.
        const sequence = Number(headers['webhook-sequence'] ?? headers['webhook-position']);
        const n = (this.attempts.get(sequence) ?? 0) + 1;
        this.attempts.set(sequence, n);
        if (n === 1 && this.hangFirst.has(sequence)) return; // no answer: the sender's timeout decides
        if (this.down || n <= (this.failFirst.get(sequence) ?? 0)) {
          res.writeHead(n <= (this.failFirst.get(sequence) ?? 0) ? 500 : 503).end();
          return;
        }
        const verifiedBy = this.secrets.findIndex((s) => WebhookSigner.verify(s, headers, body));
        if (verifiedBy < 0) {
          this.rejectedSignatures++;
          res.writeHead(401).end();
          return;
        }
        this.inFlight++;
        this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
        const answer = () => {
          this.inFlight--;
          this.accepted.push({ sequence, body: JSON.parse(body), raw, headers, verifiedBy, at: Date.now() });
          res.writeHead(204).end();
        };
        if (this.delayMs > 0) setTimeout(answer, this.delayMs);
        else answer();
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  sequences(): number[] {
    return this.accepted.map((a) => a.sequence);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/**
 * Standard Webhooks verification done here, not with the service's signer: an HMAC-SHA256 over
 * `msgId.timestamp.` followed by the body's bytes exactly as received (no decoding, no re-encoding).
 */
export function signedOverBytes(secret: string, headers: Record<string, string | undefined>, raw: Buffer): boolean {
  const id = headers['webhook-id'];
  const ts = headers['webhook-timestamp'];
  const sigs = headers['webhook-signature'];
  if (!id || !ts || !sigs) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const mac = createHmac('sha256', key)
    .update(Buffer.from(`${id}.${ts}.`, 'utf8'))
    .update(raw)
    .digest('base64');
  return sigs.split(' ').includes(`v1,${mac}`);
}
