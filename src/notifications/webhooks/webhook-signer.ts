import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com/): the receiver can check a
 * delivery with any of the spec's libraries, not only with code we publish.
 */

const SECRET_PREFIX = 'whsec_';

export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return Buffer.from(encoded, 'base64');
}

function signature(secret: string, msgId: string, timestamp: string, body: string): string {
  return createHmac('sha256', secretKey(secret)).update(`${msgId}.${timestamp}.${body}`).digest('base64');
}

function header(headers: Record<string, string | undefined>, name: string): string | undefined {
  if (headers[name] !== undefined) return headers[name];
  // Receivers hand over headers as their framework spells them; the names are case-insensitive.
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

export class WebhookSigner {
  /** The `webhook-signature` value: one `v1,` entry per secret, so a rotation overlap verifies with either. */
  static sign(secrets: string[], msgId: string, timestampSec: number, body: string): string {
    if (secrets.length === 0) throw new Error('at least one webhook secret is needed to sign');
    // Receivers parse the timestamp as whole seconds; a fraction would make every check fail.
    if (!Number.isSafeInteger(timestampSec)) throw new RangeError('webhook timestamp must be whole seconds');
    return secrets.map((s) => `v1,${signature(s, msgId, String(timestampSec), body)}`).join(' ');
  }

  static headers(secrets: string[], msgId: string, timestampSec: number, body: string): Record<string, string> {
    return {
      'webhook-id': msgId,
      'webhook-timestamp': String(timestampSec),
      'webhook-signature': WebhookSigner.sign(secrets, msgId, timestampSec, body),
    };
  }

  /**
   * The receiver's check, as tenants should implement it. The tolerance bounds how long a
   * captured delivery can be replayed; the receiver should also drop repeated `webhook-id`s.
   */
  static verify(
    secret: string,
    headers: Record<string, string | undefined>,
    body: string,
    toleranceSec = 300,
    nowSec = Date.now() / 1000,
  ): boolean {
    const msgId = header(headers, 'webhook-id');
    const timestamp = header(headers, 'webhook-timestamp');
    const signatures = header(headers, 'webhook-signature');
    if (!msgId || !timestamp || !signatures || !/^\d{1,15}$/.test(timestamp)) return false;
    if (Math.abs(nowSec - Number(timestamp)) > toleranceSec) return false;

    const expected = Buffer.from(signature(secret, msgId, timestamp, body));
    return signatures.split(' ').some((entry) => {
      if (!entry.startsWith('v1,')) return false;
      const candidate = Buffer.from(entry.slice(3));
      return candidate.length === expected.length && timingSafeEqual(candidate, expected);
    });
  }
}
