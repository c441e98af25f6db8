import { randomBytes } from 'node:crypto';

let lastMs = 0;
let seq = 0;

// One getrandom call per 512 ids rather than one per id: it showed in append-path profiles.
const POOL_IDS = 512;
let pool = Buffer.alloc(0);
let poolOffset = 0;

function random16(): Buffer {
  if (poolOffset >= pool.length) {
    pool = randomBytes(16 * POOL_IDS);
    poolOffset = 0;
  }
  const b = Buffer.from(pool.subarray(poolOffset, poolOffset + 16));
  poolOffset += 16;
  return b;
}

/**
 * RFC 9562 UUIDv7: 48-bit millisecond time, then a 12-bit counter (rand_a) so that ids made in
 * the same millisecond by this process still sort in creation order.
 */
export function uuidv7(nowMs: number = Date.now()): string {
  if (nowMs <= lastMs) {
    seq++;
    if (seq > 0xfff) {
      lastMs++;
      seq = 0;
    }
  } else {
    lastMs = nowMs;
    seq = 0;
  }
  const b = random16();
  const ms = lastMs;
  b[0] = Math.floor(ms / 2 ** 40) & 0xff;
  b[1] = Math.floor(ms / 2 ** 32) & 0xff;
  b[2] = (ms >>> 24) & 0xff;
  b[3] = (ms >>> 16) & 0xff;
  b[4] = (ms >>> 8) & 0xff;
  b[5] = ms & 0xff;
  b[6] = 0x70 | ((seq >>> 8) & 0x0f);
  b[7] = seq & 0xff;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
