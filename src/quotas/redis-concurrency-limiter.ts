import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import { ConcurrencyLimiter, REFUSED_SLOT, SlotGrant } from './concurrency-limiter.port';
import { InProcessConcurrencyLimiter } from './in-process-concurrency-limiter';
import { RedisCircuit } from './redis-circuit';

/**
 * A key's slots are a sorted set of holders scored by when they expire (Redis's clock). Taking one
 * drops the expired, counts, and adds this holder if there is room, atomically.
 * Returns {1 if taken else 0, holders now}.
 */
const ACQUIRE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZCARD', KEYS[1])
if held >= tonumber(ARGV[1]) then return {0, held} end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return {1, held + 1}
`;

/**
 * Pushes the expiry of this instance's live holders of one key (ARGV[2..]). A holder that had
 * expired or vanished (Redis restarted, flushed) is added back: it is still open, and the count
 * must say so even if that puts it over the limit for a while.
 */
const REFRESH_SCRIPT = `
local t = redis.call('TIME')
local expires = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], expires, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]))
return #ARGV - 1
`;

type AcquireCommand = (key: string, limit: number, holder: string, ttlMs: number) => Promise<[number, number]>;
type RefreshCommand = (key: string, ttlMs: number, ...holders: string[]) => Promise<number>;

export interface RedisConcurrencyLimiterOptions {
  keyPrefix?: string;
  /** A holder not refreshed within this is counted no more (its instance died without releasing). */
  ttlMs?: number;
  circuit?: RedisCircuit;
}

/**
 * Slots shared by every instance through Redis. Each live slot of this instance is refreshed
 * every third of `ttlMs` (one script call per key), so a slot held by an instance that crashed
 * frees itself within `ttlMs`. While Redis fails, slots are counted in this instance only.
 */
export class RedisConcurrencyLimiter implements ConcurrencyLimiter {
  readonly kind = 'redis';
  private readonly instance = randomUUID();
  private readonly fallback = new InProcessConcurrencyLimiter();
  /** Live holders of this instance, by Redis key. */
  private readonly live = new Map<string, Set<string>>();
  private readonly acquireCommand: AcquireCommand;
  private readonly refreshCommand: RefreshCommand;
  private readonly keyPrefix: string;
  private readonly ttlMs: number;
  private readonly circuit: RedisCircuit;
  private readonly timer: NodeJS.Timeout;
  private seq = 0;
  private closed = false;

  constructor(
    private readonly redis: Redis,
    options: RedisConcurrencyLimiterOptions = {},
  ) {
    this.keyPrefix = options.keyPrefix ?? 'es:quota:slots:';
    this.ttlMs = options.ttlMs ?? 30_000;
    this.circuit = options.circuit ?? new RedisCircuit();
    const commands = redis as unknown as Record<string, unknown>;
    if (!commands.esAcquireSlot) redis.defineCommand('esAcquireSlot', { numberOfKeys: 1, lua: ACQUIRE_SCRIPT });
    if (!commands.esRefreshSlots) redis.defineCommand('esRefreshSlots', { numberOfKeys: 1, lua: REFRESH_SCRIPT });
    this.acquireCommand = (commands.esAcquireSlot as AcquireCommand).bind(redis);
    this.refreshCommand = (commands.esRefreshSlots as RefreshCommand).bind(redis);
    this.timer = setInterval(() => void this.refresh(), Math.max(10, Math.floor(this.ttlMs / 3)));
    this.timer.unref();
  }

  async acquire(key: string, limit: number): Promise<SlotGrant> {
    if (!this.circuit.closed()) return this.fallback.acquireNow(key, limit);
    const redisKey = this.keyPrefix + key;
    const holder = `${this.instance}:${++this.seq}`;
    let taken: number;
    let held: number;
    try {
      [taken, held] = await this.acquireCommand(redisKey, limit, holder, this.ttlMs);
    } catch (e) {
      this.circuit.failed(e);
      return this.fallback.acquireNow(key, limit);
    }
    if (!Number(taken)) return REFUSED_SLOT(Number(held));
    let holders = this.live.get(redisKey);
    if (!holders) this.live.set(redisKey, (holders = new Set()));
    holders.add(holder);
    let released = false;
    return {
      granted: true,
      held: Number(held),
      release: () => {
        if (released) return;
        released = true;
        const set = this.live.get(redisKey);
        set?.delete(holder);
        if (set?.size === 0) this.live.delete(redisKey);
        // Not awaited by the caller; a release lost to a Redis failure expires with the TTL. After close() the slot went with it.
        if (!this.closed) this.redis.zrem(redisKey, holder).catch((e) => this.circuit.failed(e));
      },
    };
  }

  /** Holders of a key that Redis counts now (tests, diagnostics). */
  async count(key: string): Promise<number> {
    return this.redis.zcard(this.keyPrefix + key);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    // Held slots go back at once rather than waiting out their TTL on the other instances.
    const pending = [...this.live].map(([key, holders]) => this.redis.zrem(key, ...holders).catch(() => undefined));
    this.live.clear();
    await Promise.all(pending);
    await this.fallback.close();
  }

  private async refresh(): Promise<void> {
    if (!this.circuit.closed()) return;
    try {
      await Promise.all([...this.live].map(([key, holders]) => this.refreshCommand(key, this.ttlMs, ...holders)));
    } catch (e) {
      this.circuit.failed(e);
    }
  }
}
