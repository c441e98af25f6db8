import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** 256 bits of randomness; the prefix lets secret scanners recognise a leaked key. */
export function generateApiKey(): string {
  return `esk_${randomBytes(32).toString('base64url')}`;
}

export function generateKeyId(): string {
  return `key_${randomBytes(8).toString('hex')}`;
}

/**
 * A plain SHA-256 is enough here: keys are random and long, so there is nothing to brute-force
 * that a slow hash would protect. What matters is that the key itself is never stored.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Compares two secrets in time independent of where they differ (and of their lengths). */
export function secretsEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a, 'utf8').digest();
  const db = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(da, db);
}

/**
 * Two SHA-256 hex digests compared in time independent of where they differ. Their length is no
 * secret (always 64), so no hashing first: what secretsEqual does costs two SHA-256 per request.
 */
export function digestsEqual(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a, 'latin1'), Buffer.from(b, 'latin1'));
}
